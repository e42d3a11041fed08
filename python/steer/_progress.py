"""Progress of a tuning run, in a terminal and in Jupyter, with no dependency of its own.

With tqdm installed, a tqdm.auto bar (a widget in Jupyter, a bar in a terminal); without it, a
line rewritten in place on a terminal, or a plain line now and then elsewhere (a notebook's
output, a log). Updates are throttled so that showing progress costs microseconds per test.
"""

import sys
import time


def _in_notebook():
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def describe_configuration(configuration):
    return ", ".join(f"{name}={value:.3f}" if isinstance(value, float) else f"{name}={value}"
                     for name, value in configuration.items())


class Progress:
    """A callable for the tuning loop's on_test(result, progress): shows how far tuning is."""

    def __init__(self, label, stream=None, interval_s=None):
        self.label = label
        self.notebook = _in_notebook()
        # A notebook shows stderr as warnings; progress is ordinary output there.
        self.stream = stream or (sys.stdout if self.notebook else sys.stderr)
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        # A rewritten line can change often; appended lines must stay few.
        self.interval_s = interval_s if interval_s is not None else (0.1 if self.tty else 5.0)
        self.bar = None
        self.shown = 0.0
        self.last = None
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            self.bar = tqdm(desc=label, unit="test", file=None if self.notebook else self.stream, leave=True)

    def _line(self, progress):
        planned = progress.get("planned")
        done = f"{progress['tests']}/{planned}" if planned else f"{progress['tests']}"
        best = progress.get("best_ms")
        text = f"{self.label}: {done} tests, {progress['valid']} valid"
        if best is not None:
            text += f", best {best:.4g} ms ({describe_configuration(progress['best'])})"
        return text

    def __call__(self, result, progress):
        self.last = progress
        if self.bar is not None:
            if progress.get("planned") and self.bar.total != progress["planned"]:
                self.bar.total = progress["planned"]
            self.bar.n = progress["tests"]
            best = progress.get("best_ms")
            if best is not None:
                self.bar.set_postfix_str(f"best {best:.4g} ms", refresh=False)
            now = time.monotonic()
            if now - self.shown >= self.bar.mininterval:
                self.bar.refresh()
                self.shown = now
            return
        now = time.monotonic()
        if now - self.shown < self.interval_s:
            return
        self.shown = now
        if self.tty:
            self.stream.write("\r\033[K" + self._line(progress))
        else:
            self.stream.write(self._line(progress) + "\n")
        self.stream.flush()

    def close(self):
        if self.bar is not None:
            if self.last is not None:
                self.bar.n = self.last["tests"]
                self.bar.refresh()
            self.bar.close()
            return
        if self.last is not None:
            if self.tty:
                self.stream.write("\r\033[K" + self._line(self.last) + "\n")
            else:
                self.stream.write(self._line(self.last) + "\n")
            self.stream.flush()


class PrintEach:
    """verbose output in Kernel Tuner's manner: one line per tested configuration."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout

    def __call__(self, result, progress):
        configuration = describe_configuration(result["configuration"])
        if result["status"] == "ok":
            self.stream.write(f"{configuration}, time={result['time']['median_ms']:.3f}ms\n")
        else:
            message = result["message"].strip().splitlines()[0] if result["message"].strip() else ""
            self.stream.write(f"{configuration}, {result['status']}" + (f": {message}" if message else "") + "\n")

    def close(self):
        self.stream.flush()


class Chain:
    """Several on_test callables as one."""

    def __init__(self, *callables):
        self.callables = [c for c in callables if c is not None]

    def __call__(self, result, progress):
        for c in self.callables:
            c(result, progress)

    def close(self):
        for c in self.callables:
            close = getattr(c, "close", None)
            if close is not None:
                close()
