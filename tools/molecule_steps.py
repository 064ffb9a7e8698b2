# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a command (``molecule test -s NAME``), pass its output through unchanged, and end with
the seconds each molecule step took: ``=== steps of NAME: create 14 s, converge 120 s, ...``.

`make molecule-one` runs every scenario through it, so each scenario's log (and `make test`'s
table, which prints these lines) says where a scenario's time goes - the figures the CI budget
is cut by. A step is timed from its ``<step>: Executing`` line to the next step's, or to the
end of the command. Exits with the command's exit status."""

from __future__ import absolute_import, division, print_function

import re
import subprocess
import sys
import time

ANSI = re.compile(r'\x1b\[[0-9;]*m')
# "INFO     cuda_toolkit ➜ converge: Executing" (colours stripped)
STEP = re.compile(r'\s(?P<step>[a-z_]+): Executing\s*$')


class StepClock(object):
    """Seconds per molecule step from the lines of its output, in order of appearance."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.steps = []          # [(step, seconds)], a step run twice (destroy) listed twice
        self._current = None

    def line(self, text):
        match = STEP.search(ANSI.sub('', text))
        if match:
            self._close()
            self._current = (match.group('step'), self.clock())

    def _close(self):
        if self._current is not None:
            step, started = self._current
            self.steps.append((step, int(round(self.clock() - started))))
            self._current = None

    def summary(self, name):
        self._close()
        return '=== steps of %s: %s' % (name, ', '.join('%s %d s' % s for s in self.steps) or 'none seen')


def main(argv):
    if len(argv) < 3 or argv[1] == '-h':
        print('usage: python tools/molecule_steps.py NAME COMMAND [ARG...]', file=sys.stderr)
        return 2
    name, command = argv[1], argv[2:]
    clock = StepClock()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for raw in iter(proc.stdout.readline, b''):
        sys.stdout.buffer.write(raw)
        sys.stdout.buffer.flush()
        clock.line(raw.decode('utf-8', 'replace'))
    rc = proc.wait()
    print(clock.summary(name))
    return rc


if __name__ == '__main__':
    sys.exit(main(sys.argv))
