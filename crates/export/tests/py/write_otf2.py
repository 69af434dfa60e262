"""Writes an OTF2 archive with python3-otf2's writer, as another tool would:
two MPI ranks (point-to-point, non-blocking, collectives) and a pthread on
rank 0, with a 1 MHz timer. Prints what it wrote as JSON, for the import
tests.

Usage: /usr/bin/python3 write_otf2.py DIR   (writes DIR/traces.otf2)
"""
import json
import sys

import otf2
from otf2.enums import (CollectiveOp, GroupType, LocationGroupType, LocationType, Paradigm,
                        RegionRole)

STEPS = 5


def main():
    out = sys.argv[1]
    expect = {"locations": {}, "sends": 0, "bytes": 0}
    with otf2.writer.open(out, timer_resolution=1000000) as trace:
        d = trace.definitions
        root = d.system_tree_node("cluster")
        node = d.system_tree_node("node0", parent=root)
        reg = {}
        for name, role, paradigm in [
            ("main", RegionRole.FUNCTION, Paradigm.USER),
            ("compute", RegionRole.FUNCTION, Paradigm.USER),
            ("MPI_Init", RegionRole.FUNCTION, Paradigm.MPI),
            ("MPI_Send", RegionRole.POINT2POINT, Paradigm.MPI),
            ("MPI_Recv", RegionRole.POINT2POINT, Paradigm.MPI),
            ("MPI_Isend", RegionRole.POINT2POINT, Paradigm.MPI),
            ("MPI_Irecv", RegionRole.POINT2POINT, Paradigm.MPI),
            ("MPI_Waitall", RegionRole.POINT2POINT, Paradigm.MPI),
            ("MPI_Allreduce", RegionRole.COLL_ALL2ALL, Paradigm.MPI),
            ("MPI_Barrier", RegionRole.BARRIER, Paradigm.MPI),
            ("pthread_create", RegionRole.THREAD_CREATE, Paradigm.PTHREAD),
            ("pthread_join", RegionRole.THREAD_WAIT, Paradigm.PTHREAD),
            ("helper", RegionRole.FUNCTION, Paradigm.USER),
        ]:
            reg[name] = d.region(name, region_role=role, paradigm=paradigm)
        g0 = d.location_group("MPI Rank 0", system_tree_parent=node,
                              location_group_type=LocationGroupType.PROCESS)
        g1 = d.location_group("MPI Rank 1", system_tree_parent=node,
                              location_group_type=LocationGroupType.PROCESS)
        m0 = d.location("Master thread", group=g0, type=LocationType.CPU_THREAD)
        p0 = d.location("Pthread thread 1", group=g0, type=LocationType.CPU_THREAD)
        m1 = d.location("Master thread", group=g1, type=LocationType.CPU_THREAD)
        d.group("MPI locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                members=[m0, m1])
        world = d.comm("MPI_COMM_WORLD", group=d.group(
            "world", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=[0, 1]))
        d.group("pthread locations", group_type=GroupType.COMM_LOCATIONS,
                paradigm=Paradigm.PTHREAD, members=[m0, p0])
        threads = d.comm("threads of rank 0", group=d.group(
            "threads", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.PTHREAD,
            members=[0, 1]))

        def count(loc, what, n=1):
            c = expect["locations"].setdefault(loc, {})
            c[what] = c.get(what, 0) + n

        for rank, loc in [(0, m0), (1, m1)]:
            w = trace.event_writer_from_location(loc)
            key = "%d:0" % rank
            other = 1 - rank
            t = 100 + rank
            w.enter(t, reg["main"])
            w.enter(t + 1, reg["MPI_Init"])
            w.leave(t + 5, reg["MPI_Init"])
            count(key, "enter", 2)
            count(key, "leave", 1)
            t += 10
            if rank == 0:
                w.enter(t, reg["pthread_create"])
                w.thread_create(t + 1, threads, 1)
                w.leave(t + 2, reg["pthread_create"])
                count(key, "enter")
                count(key, "leave")
                count(key, "thread_create")
            t += 10
            for i in range(STEPS):
                w.enter(t, reg["compute"])
                w.leave(t + 50 + 10 * rank, reg["compute"])
                t += 60 + 10 * rank
                n = 1000 * (i + 1)
                if rank == 0:
                    w.enter(t, reg["MPI_Send"])
                    w.mpi_send(t + 1, other, world, 7, n)
                    w.leave(t + 3, reg["MPI_Send"])
                    count(key, "send")
                    expect["sends"] += 1
                    expect["bytes"] += n
                else:
                    w.enter(t, reg["MPI_Recv"])
                    w.mpi_recv(t + 2, other, world, 7, n)
                    w.leave(t + 3, reg["MPI_Recv"])
                    count(key, "recv")
                t += 5
                w.enter(t, reg["MPI_Isend"])
                w.mpi_isend(t + 1, other, world, 9, 64, 100 + i)
                w.leave(t + 2, reg["MPI_Isend"])
                w.enter(t + 3, reg["MPI_Irecv"])
                w.mpi_irecv_request(t + 4, 200 + i)
                w.leave(t + 5, reg["MPI_Irecv"])
                w.enter(t + 6, reg["MPI_Waitall"])
                w.mpi_isend_complete(t + 7, 100 + i)
                w.mpi_irecv(t + 8, other, world, 9, 64, 200 + i)
                w.leave(t + 9, reg["MPI_Waitall"])
                for k in ["isend_begin", "isend_complete", "irecv_begin", "irecv_complete"]:
                    count(key, k)
                t += 10
                w.enter(t, reg["MPI_Allreduce"])
                w.mpi_collective_begin(t + 1)
                w.mpi_collective_end(t + 4, CollectiveOp.ALLREDUCE, world, 0xFFFFFFFF, 8, 8)
                w.leave(t + 5, reg["MPI_Allreduce"])
                w.enter(t + 6, reg["MPI_Barrier"])
                w.mpi_collective_begin(t + 7)
                w.mpi_collective_end(t + 9, CollectiveOp.BARRIER, world, 0xFFFFFFFF, 0, 0)
                w.leave(t + 10, reg["MPI_Barrier"])
                count(key, "collective_begin", 2)
                count(key, "collective_end", 2)
                count(key, "enter", 7)
                count(key, "leave", 7)
                count(key, "compute")
                t += 20
            if rank == 0:
                w.enter(t, reg["pthread_join"])
                w.thread_wait(t + 30, threads, 1)
                w.leave(t + 31, reg["pthread_join"])
                count(key, "enter")
                count(key, "leave")
                count(key, "thread_join")
                t += 40
            w.leave(t, reg["main"])
            count(key, "leave")
        w = trace.event_writer_from_location(p0)
        w.thread_begin(125, threads, 1)
        w.enter(126, reg["helper"])
        w.leave(400, reg["helper"])
        w.thread_end(401, threads, 1)
        expect["locations"]["0:1"] = {"thread_begin": 1, "enter": 1, "leave": 1,
                                      "thread_end": 1}
    print(json.dumps(expect))


main()
