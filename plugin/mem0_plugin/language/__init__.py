"""One text: its words, stems and glosses (search), its features and its reading (what the pair
rules read). Imports only the core modules; nothing here compares two texts."""
