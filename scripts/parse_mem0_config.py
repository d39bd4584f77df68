#!/usr/bin/env python3
"""Print the Retention policies of a project's mem0.md as JSON (docs/identity.md, "mem0.md").

Runs with a bare python3, without the package installed: it loads the package's own
parser (`plugin/mem0_plugin/mem0_config.py`, standard library only) from the plugin
root beside this script, so the rules exist in one place.

    python3 scripts/parse_mem0_config.py [<cwd>]
"""

import os
import sys

_PLUGIN_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "plugin")
if _PLUGIN_DIR not in sys.path:
    sys.path.insert(0, _PLUGIN_DIR)

from mem0_plugin.mem0_config import (  # noqa: E402
    find_mem0_config,
    load_retention_policies,
    main,
    parse_retention,
)

__all__ = ["find_mem0_config", "load_retention_policies", "parse_retention"]

if __name__ == "__main__":
    sys.exit(main())
