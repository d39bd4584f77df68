"""The hosted store (docs/hosted.md): a project on the Mem0 platform through its client, with
a local mirror."""
