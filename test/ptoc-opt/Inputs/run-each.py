# Runs a command once per file of a directory and prints one line per file:
#   <file>: exit status N: <the first line of its output that contains "error:">
# ("killed by signal N" instead of "exit status N" when the command crashed, and
# "no error line" when nothing said "error:"), then "ran N files".
#
# Usage: run-each.py DIR COMMAND ARGS...   ("{}" in ARGS is replaced by the file)
import os
import subprocess
import sys

directory, command = sys.argv[1], sys.argv[2:]
names = sorted(os.listdir(directory))
for name in names:
    path = os.path.join(directory, name)
    args = [path if a == "{}" else a for a in command]
    proc = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    text = proc.stdout.decode("utf-8", errors="replace")
    status = ("killed by signal %d" % -proc.returncode if proc.returncode < 0
              else "exit status %d" % proc.returncode)
    error = next((line for line in text.splitlines() if "error:" in line), "no error line")
    print("%s: %s: %s" % (name, status, error[:300]))
print("ran %d files" % len(names))
