# Runs a command and prints its output (stderr merged into stdout), then one line
# saying how it ended: "exit status N", or "killed by signal N" when it crashed.
# lit's built-in `not` only inverts the exit code, so `not cmd` also passes when cmd
# crashes; tests that must tell an error from a crash check this line instead.
#
# Usage: exit-status.py [--stdin FILE] COMMAND ARGS...
import subprocess
import sys

args = sys.argv[1:]
stdin = subprocess.DEVNULL
if args[:1] == ["--stdin"]:
    stdin = open(args[1], "rb")
    args = args[2:]
proc = subprocess.run(args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.write(proc.stdout.decode("utf-8", errors="replace"))
if proc.returncode < 0:
    print("killed by signal %d" % -proc.returncode)
else:
    print("exit status %d" % proc.returncode)
