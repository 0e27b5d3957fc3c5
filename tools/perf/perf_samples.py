"""Reads `perf script` output of a record-worker.sh profile into samples (shared by the scripts here)."""
import re
import subprocess

HEADER = re.compile(r"\s*(.*?)\s+(\d+)\s+([\d.]+):\s+(?:\d+\s+)?(\S+):\s*(.*)")


def samples(path):
    """Yields (comm, tid, time, event, trace text, frames innermost first) for every sample and switch."""
    text = subprocess.run(
        ["perf", "script", "-i", path, "-F", "comm,tid,time,event,trace,ip,sym"],
        capture_output=True, text=True, check=True,
    ).stdout
    for block in text.split("\n\n"):
        lines = block.strip("\n").split("\n")
        if not lines or not lines[0].strip():
            continue
        match = HEADER.match(lines[0])
        if not match:
            continue
        frames = [parts[1] for parts in (line.strip().split(None, 1) for line in lines[1:]) if len(parts) == 2]
        yield (match.group(1), int(match.group(2)), float(match.group(3)), match.group(4), match.group(5), frames)


def apply_window(all_samples):
    """The first and last cpu-clock sample of an apply thread: the catch-up proper."""
    times = [s[2] for s in all_samples if s[3].startswith("cpu-clock") and s[0].startswith("gw-apply")]
    return min(times), max(times)
