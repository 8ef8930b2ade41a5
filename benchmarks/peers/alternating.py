"""Epochs of several loaders timed side by side in one process, so that the machine's
noise falls on all of them alike."""

import statistics
import time


def alternate(systems, repetitions):
    """systems: name -> (loader, consume), consume(loader) running one epoch and returning
    what it counted. One warm-up epoch each, then `repetitions` rounds, each round in an
    order rotated by one. Returns (seconds per name, each epoch's; count per name, of the
    warm-up epoch; median seconds per name)."""
    counts = {name: consume(loader) for name, (loader, consume) in systems.items()}
    seconds = {name: [] for name in systems}
    names = list(systems)
    for repetition in range(repetitions):
        shift = repetition % len(names)
        for name in names[shift:] + names[:shift]:
            loader, consume = systems[name]
            start = time.perf_counter()
            consume(loader)
            seconds[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(times) for name, times in seconds.items()}
    return seconds, counts, medians
