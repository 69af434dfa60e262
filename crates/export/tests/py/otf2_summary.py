"""Reads an OTF2 archive with python3-otf2 and prints a JSON summary per
location, for the export tests.

Usage: /usr/bin/python3 otf2_summary.py ANCHOR.otf2
"""
import json
import sys

import otf2


def main():
    out = {"locations": {}, "regions": [], "errors": []}
    with otf2.reader.open(sys.argv[1]) as trace:
        d = trace.definitions
        cp = d.clock_properties
        out["clock"] = {"resolution": cp.timer_resolution, "offset": cp.global_offset,
                        "length": cp.trace_length}
        out["regions"] = sorted({r.name for r in d.regions})
        out["region_roles"] = {r.name: str(r.region_role) for r in d.regions}
        out["comms"] = {c.name: len(c.group.members) for c in d.comms}
        for loc, ev in trace.events:
            key = "%s/%s" % (loc.group.name, loc.name)
            s = out["locations"].setdefault(key, {
                "kinds": {}, "enters": {}, "sends": [], "recvs": [], "first": ev.time,
                "last": ev.time, "count": 0, "collective_bytes": 0, "rma_bytes": 0,
                "metric_sum": 0, "params": {}})
            name = type(ev).__name__
            s["kinds"][name] = s["kinds"].get(name, 0) + 1
            s["count"] += 1
            if ev.time < s["last"]:
                out["errors"].append("time goes back on " + key)
            s["last"] = ev.time
            if name == "Enter":
                s["enters"][ev.region.name] = s["enters"].get(ev.region.name, 0) + 1
            elif name in ("MpiSend", "MpiIsend"):
                s["sends"].append([ev.receiver, ev.msg_length, ev.msg_tag])
            elif name in ("MpiRecv", "MpiIrecv"):
                s["recvs"].append([ev.sender, ev.msg_length, ev.msg_tag])
            elif name == "MpiCollectiveEnd":
                s["collective_bytes"] += ev.size_sent + ev.size_received
            elif name in ("RmaPut", "RmaGet"):
                s["rma_bytes"] += ev.bytes
            elif name == "Metric":
                s["metric_sum"] += sum(int(v) for v in ev.values)
            elif name in ("ParameterInt", "ParameterUnsignedInt"):
                p = ev.parameter.name
                s["params"][p] = s["params"].get(p, 0) + 1
    print(json.dumps(out))


main()
