"""Decodes a Perfetto trace with the official descriptors and prints a JSON
summary, for the export tests.

Usage: /usr/bin/python3 perfetto_summary.py TRACE [WHEEL]

The descriptors come from perfetto_trace_pb2.py inside the `perfetto` wheel
(scripts/setup.sh downloads it); only its serialized FileDescriptorProto is
used, so Debian's python3-protobuf suffices.
"""
import ast
import json
import os
import re
import sys
import zipfile

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PB2 = "perfetto/protos/perfetto/trace/perfetto_trace_pb2.py"


def trace_class(wheel):
    with zipfile.ZipFile(wheel) as z:
        src = z.read(PB2).decode()
    m = re.search(r"AddSerializedFile\((b'(?:[^'\\]|\\.)*')\)", src)
    fdp = descriptor_pb2.FileDescriptorProto.FromString(ast.literal_eval(m.group(1)))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    d = pool.FindMessageTypeByName("perfetto.protos.Trace")
    try:
        return message_factory.GetMessageClass(d)
    except AttributeError:
        return message_factory.MessageFactory(pool).GetPrototype(d)


def main():
    path = sys.argv[1]
    wheel = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.environ.get("PARALLAX_TEST_DEPS", os.path.expanduser("~/.cache/parallax-test-deps")),
        "perfetto-0.59.1-py3-none-any.whl")
    Trace = trace_class(wheel)
    trace = Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    tracks = {}
    seqs = {}
    events = {}
    errors = []
    flows_started, flows_ended = set(), set()
    last_ts = {}
    for p in trace.packet:
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            t = {"uuid": td.uuid, "parent": td.parent_uuid}
            if td.HasField("process"):
                t.update(kind="process", pid=td.process.pid, name=td.process.process_name)
            elif td.HasField("thread"):
                t.update(kind="thread", pid=td.thread.pid, tid=td.thread.tid, name=td.thread.thread_name)
            elif td.HasField("counter"):
                t.update(kind="counter", name=td.name)
            tracks[td.uuid] = t
            continue
        sid = p.trusted_packet_sequence_id
        st = seqs.setdefault(sid, {"names": {}, "ann": {}, "track": None, "cleared": False})
        if p.sequence_flags & 1:
            st.update(names={}, ann={}, track=None, cleared=True)
        if p.HasField("trace_packet_defaults"):
            st["track"] = p.trace_packet_defaults.track_event_defaults.track_uuid
        if p.HasField("interned_data"):
            for n in p.interned_data.event_names:
                st["names"][n.iid] = n.name
            for n in p.interned_data.debug_annotation_names:
                st["ann"][n.iid] = n.name
        if not p.HasField("track_event"):
            continue
        if not st["cleared"]:
            errors.append("event before incremental state was cleared")
        te = p.track_event
        track = te.track_uuid if te.HasField("track_uuid") else st["track"]
        if track not in tracks:
            errors.append("event on undeclared track %d" % track)
            continue
        owner = tracks[track]
        if owner["kind"] == "counter":
            owner = tracks[owner["parent"]]
        key = "%d:%d" % (owner["pid"], owner["tid"])
        if p.timestamp < last_ts.get(key, 0):
            errors.append("time goes back on %s" % key)
        last_ts[key] = p.timestamp
        e = events.setdefault(key, {"begin": 0, "end": 0, "instant": 0, "counter": 0,
                                    "names": {}, "instant_names": {}, "first_ts": p.timestamp, "depth": 0,
                                    "annotations": {}, "counter_sum": 0})
        e["last_ts"] = p.timestamp
        name = None
        if te.HasField("name_iid"):
            if te.name_iid not in st["names"]:
                errors.append("name iid %d not interned" % te.name_iid)
            name = st["names"].get(te.name_iid)
        if te.type == 1:
            e["begin"] += 1
            e["depth"] += 1
            e["names"][name] = e["names"].get(name, 0) + 1
        elif te.type == 2:
            e["end"] += 1
            e["depth"] -= 1
            if e["depth"] < 0:
                errors.append("slice end without begin on %s" % key)
        elif te.type == 3:
            e["instant"] += 1
            e["instant_names"][name] = e["instant_names"].get(name, 0) + 1
            for a in te.debug_annotations:
                an = st["ann"].get(a.name_iid)
                if an is None:
                    errors.append("annotation name iid %d not interned" % a.name_iid)
                v = a.uint_value if a.HasField("uint_value") else a.int_value
                k = "%s.%s" % (name, an)
                e["annotations"][k] = e["annotations"].get(k, 0) + v
        elif te.type == 4:
            e["counter"] += 1
            e["counter_sum"] += te.counter_value
        flows_started.update(te.flow_ids)
        flows_ended.update(te.terminating_flow_ids)
    print(json.dumps({
        "packets": len(trace.packet),
        "tracks": list(tracks.values()),
        "events": events,
        "flows": {"started": len(flows_started), "ended": len(flows_ended),
                  "matched": len(flows_started & flows_ended)},
        "errors": errors[:20],
    }))


main()
