"""The worker's stock of job descriptors (sandbox/worker/stock.py): made ahead in a
container, handed out in the order they were made, never more than the descriptor
limit leaves room for; made per job on a host."""
from __future__ import annotations

import os
import resource
import stat

from sandbox.worker.stock import FDS_PER_KIT, Stock, kits_that_fit, stock_base


def _close(kit) -> None:
    kit.close_sockets()
    for read_end, write_end in kit.pipes:
        os.close(read_end)
        os.close(write_end)


def test_kits_made_ahead_come_out_in_order_then_run_out():
    stock = Stock(3)
    assert stock.left() == 3
    kits = [stock.take() for _ in range(3)]
    assert stock.take() is None and stock.left() == 0
    # Made one after another: each kit's socket was made before the next kit's.
    numbers = [os.fstat(kit.sockets[0].fileno()).st_ino for kit in kits]
    assert numbers == sorted(numbers)
    for kit in kits:
        assert all(stat.S_ISFIFO(os.fstat(end).st_mode) for pipe in kit.pipes for end in pipe)
        assert len(kit.pipes) == 3
        _close(kit)


def test_on_a_host_each_kit_is_made_when_taken():
    stock = Stock(None)
    assert stock.left() is None
    for _ in range(3):
        kit = stock.take()
        assert kit is not None
        _close(kit)


def test_no_more_kits_than_the_descriptor_limit_leaves_room_for():
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert kits_that_fit(5) == 5
    if soft != resource.RLIM_INFINITY:
        fitted = kits_that_fit(10**9)
        assert fitted * FDS_PER_KIT + stock_base() <= soft < (fitted + 1) * FDS_PER_KIT + stock_base()


def test_a_pipe_waits_at_one_page_and_works_at_sixteen():
    """The kernel counts pipe buffers per user, host-wide (fs.pipe-user-pages-soft):
    500 kits of full-size pipes would pass that limit alone, and shrink every later
    pipe of the same user on the host."""
    import fcntl

    stock = Stock(2)
    waiting = stock._kits[0]
    assert all(fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == 4096 for read_end, _ in waiting.pipes)
    kit = stock.take()
    sizes = [fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) for read_end, _ in kit.pipes]
    assert sizes == [65536] * 3, sizes
    _close(kit)
    _close(stock.take())


def test_the_stock_waits_above_select_s_range_and_a_taken_kit_comes_down():
    """W watches a job's pipes with select(), which takes no descriptor past 1023: the
    stock's descriptors wait at or above the base, and a kit taken comes down to the
    lowest free numbers, the same pipes and socket (same inode numbers)."""
    stock = Stock(2)
    base = stock_base()
    waiting = stock._kits[-1]  # the next one out
    ends = [end.fileno() for end in waiting.sockets] + [fd for pipe in waiting.pipes for fd in pipe]
    assert min(ends) >= base
    numbers = [os.fstat(fd).st_ino for fd in ends]
    kit = stock.take()
    taken = [end.fileno() for end in kit.sockets] + [fd for pipe in kit.pipes for fd in pipe]
    assert max(taken) < min(base, 1024)
    assert [os.fstat(fd).st_ino for fd in taken] == numbers
    for fd in ends:  # the old numbers are closed
        try:
            os.fstat(fd)
        except OSError:
            continue
        raise AssertionError(f"descriptor {fd} of the stock is still open")
    _close(kit)
    _close(stock.take())
