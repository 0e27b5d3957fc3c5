"""Reads `perf script` output of a record-worker.sh profile into samples (shared by the scripts here)."""
import re
import subprocess

HEADER = re.compile(r"\s*(.*?)\s+(\d+)\s+([\d.]+):\s+(?:\d+\s+)?(\S+):\s*(.*)")
# With the pid: "comm pid/tid time: event:".
PROCESS_HEADER = re.compile(r"\s*(.*?)\s+(\d+)/(\d+)\s+([\d.]+):\s+(?:\d+\s+)?(\S+):")


def _blocks(path, fields):
    """Yields each sample's first line and its frames (innermost first) from `perf script -F fields`."""
    text = subprocess.run(
        ["perf", "script", "-i", path, "-F", fields], capture_output=True, text=True, check=True,
    ).stdout
    for block in text.split("\n\n"):
        lines = block.strip("\n").split("\n")
        if not lines or not lines[0].strip():
            continue
        frames = [parts[1] for parts in (line.strip().split(None, 1) for line in lines[1:]) if len(parts) == 2]
        yield lines[0], frames


def samples(path):
    """Yields (comm, tid, time, event, trace text, frames innermost first) for every sample and switch."""
    for header, frames in _blocks(path, "comm,tid,time,event,trace,ip,sym"):
        match = HEADER.match(header)
        if match:
            yield (match.group(1), int(match.group(2)), float(match.group(3)), match.group(4), match.group(5), frames)


def cpu_samples(path):
    """Yields (comm, pid, tid, time, frames innermost first, each with its library) for every cpu-clock sample."""
    for header, frames in _blocks(path, "comm,pid,tid,time,event,ip,sym,dso"):
        match = PROCESS_HEADER.match(header)
        if match and match.group(5).startswith("cpu-clock"):
            yield (match.group(1), int(match.group(2)), int(match.group(3)), float(match.group(4)), frames)


def apply_window(all_samples):
    """The first and last cpu-clock sample of an apply thread: the catch-up proper."""
    times = [s[2] for s in all_samples if s[3].startswith("cpu-clock") and s[0].startswith("gw-apply")]
    return min(times), max(times)
