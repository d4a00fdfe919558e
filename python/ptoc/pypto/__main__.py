"""``python3 -m ptoc.pypto [--force] SCRIPT [ARGS...]``: run a PyPTO script on ptoc,
unmodified, with ``import pypto`` giving ptoc's compatibility package.

``--force`` runs it on ptoc even when a real PyPTO is importable (without it, that
is an error: ptoc never shadows a real PyPTO unless asked).
"""

import os
import runpy
import sys

USAGE = "usage: python3 -m ptoc.pypto [--force] SCRIPT [ARGS...]"


def main(argv):
    force = False
    while argv and argv[0].startswith("-"):
        if argv[0] == "--force":
            force = True
            argv = argv[1:]
        elif argv[0] in ("-h", "--help"):
            print(USAGE)
            print(__doc__.split("\n", 2)[2].strip())
            return 0
        else:
            print(f"ptoc.pypto: unknown option {argv[0]!r}\n{USAGE}", file=sys.stderr)
            return 2
    if not argv:
        print(f"ptoc.pypto: no script given\n{USAGE}", file=sys.stderr)
        return 2
    script = argv[0]
    if not os.path.isfile(script):
        print(f"ptoc.pypto: {script}: no such file", file=sys.stderr)
        return 2
    from ptoc import pypto
    spec = pypto.real_pypto_spec()
    if spec is not None and not force:
        print(f"ptoc.pypto: a real PyPTO is importable ({getattr(spec, 'origin', None)}); "
              "run the script with it, or pass --force to run it on ptoc", file=sys.stderr)
        return 2
    pypto.install(force=True)
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
