"""Follows each end-to-end latency message through a loopback capture: see bench/run-latency-stages.

Usage: latency-stages.py PORT KAFKA-PREFIX TIDELOG-PREFIX, each prefix naming the .pcap, .sockets
(ss -tnp and ss -tlnp) and .leader (the leader's port) that run-latency-stages wrote.
"""
import re
import struct
import sys

STAGES = ["lead", "spread", "turn", "hw", "ack", "consume", "total"]


def segments(path):
    """(time s, source port, destination port, payload bytes, payload) of each TCP segment."""
    data = open(path, "rb").read()
    nanos = struct.unpack("<I", data[:4])[0] == 0xA1B23C4D
    link = struct.unpack("<I", data[20:24])[0]
    header = {0: 4, 1: 14, 113: 16}[link]
    offset, found = 24, []
    while offset + 16 <= len(data):
        sec, frac, captured, _ = struct.unpack("<IIII", data[offset : offset + 16])
        packet = data[offset + 16 : offset + 16 + captured]
        offset += 16 + captured
        ip = packet[header:]
        ihl = (ip[0] & 15) * 4
        tcp = ip[ihl:]
        source, destination = struct.unpack(">HH", tcp[:4])
        doff = (tcp[12] >> 4) * 4
        size = struct.unpack(">H", ip[2:4])[0] - ihl - doff
        if size > 0:
            found.append((sec + frac / (1e9 if nanos else 1e6), source, destination, size, tcp[doff:]))
    return found


def stages(prefix, broker_ports):
    leader = int(open(prefix + ".leader").read().split()[0])
    owner = {}  # local port -> pid
    for line in open(prefix + ".sockets"):
        fields, pid = line.split(), re.search(r"pid=(\d+)", line)
        if len(fields) >= 5 and pid:
            owner[int(fields[3].rsplit(":", 1)[1])] = int(pid.group(1))
    brokers = {owner[p] for p in broker_ports if p in owner}

    def peer(port):  # "F" for a follower broker's connection, "C" for the client's
        return "F%d" % owner[port] if owner.get(port) in brokers else "C"

    events = []  # (time, kind, peer, api key or None, frame size or segment bytes, peer port)
    for time, source, destination, size, payload in segments(prefix + ".pcap"):
        if destination == leader and len(payload) >= 6:
            events.append((time, "request", peer(source), struct.unpack(">h", payload[4:6])[0], size, source))
        elif source == leader:
            events.append((time, "response", peer(destination), None, size, destination))
    # A response carries the 1 KiB record when it is over 900 bytes long, or for a follower, over
    # 900 bytes longer than its connection's shortest (a high watermark's move alone): a fetch without
    # a session (Tidelog's followers) is answered with every partition it names
    shortest = {}
    for e in events:
        if e[1] == "response" and e[2] != "C":
            shortest[e[5]] = min(shortest.get(e[5], e[4]), e[4])

    def carries(e):
        return e[4] > shortest.get(e[5], 0) + 900

    produces = [e for e in events if e[1] == "request" and e[2] == "C" and e[3] == 0]
    samples = {s: [] for s in STAGES}
    samples["slowest stage"] = []  # (total, the stage that took longest of lead, spread, turn, hw, consume)
    for i, produce in enumerate(produces):
        start = produce[0]
        end = produces[i + 1][0] if i + 1 < len(produces) else float("inf")
        window = [e for e in events if start <= e[0] < end]
        followers = {}  # follower -> [its response with the record out, its next fetch in]
        for e in window:
            if e[1] == "response" and e[2] != "C" and carries(e) and e[2] not in followers:
                followers[e[2]] = [e[0], None]
        for name, times in followers.items():
            later = [e[0] for e in window if e[1] == "request" and e[2] == name and e[0] > times[0]]
            times[1] = later[0] if later else None
        acked = [e[0] for e in window if e[1] == "response" and e[2] == "C" and e[5] == produce[5]]
        consumed = [e[0] for e in window if e[1] == "response" and e[2] == "C" and e[5] != produce[5] and carries(e)]
        if len(followers) < 2 or any(t[1] is None for t in followers.values()) or not acked or not consumed:
            continue
        out = sorted(t[0] for t in followers.values())
        samples["lead"].append(out[0] - start)
        samples["spread"].append(out[-1] - out[0])
        samples["turn"].extend(t[1] - t[0] for t in followers.values())
        samples["hw"].append(acked[0] - max(t[1] for t in followers.values()))
        samples["ack"].append(acked[0] - start)
        samples["consume"].append(consumed[0] - acked[0])
        samples["total"].append(consumed[0] - start)
        parts = {"lead": out[0] - start, "spread": out[-1] - out[0],
                 "turn": max(t[1] - t[0] for t in followers.values()),
                 "hw": acked[0] - max(t[1] for t in followers.values()), "consume": consumed[0] - acked[0]}
        samples["slowest stage"].append((consumed[0] - start, max(parts, key=parts.get)))
    return samples, len(produces)


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e6 if ordered else float("nan")


def main():
    port = int(sys.argv[1])
    kafka, kafka_messages = stages(sys.argv[2], [port, port + 1, port + 2])
    tidelog, tidelog_messages = stages(sys.argv[3], [port, port + 1, port + 2])
    print("messages followed: Kafka %d of %d, Tidelog %d of %d" % (
        len(kafka["ack"]), kafka_messages, len(tidelog["ack"]), tidelog_messages))
    print("%-8s %-4s %10s %10s %7s" % ("stage", "", "Kafka us", "Tidelog us", "ratio"))
    for stage in STAGES:
        for label, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
            k, t = quantile(kafka[stage], q), quantile(tidelog[stage], q)
            print("%-8s %-4s %10.0f %10.0f %7.2f" % (stage, label, k, t, t / k if k > 0 else float("nan")))
    # Where the tail comes from: in the slowest 1% of messages, how often each stage took longest
    for name, found in (("Kafka", kafka), ("Tidelog", tidelog)):
        slowest = sorted(found["slowest stage"], reverse=True)[: max(1, len(found["slowest stage"]) // 100)]
        counts = {s: sum(1 for m in slowest if m[1] == s) for s in ("lead", "spread", "turn", "hw", "consume")}
        print("%s's slowest 1%% (%d), the stage that took longest: %s" % (
            name, len(slowest), ", ".join("%s %d" % (s, n) for s, n in counts.items())))


main()
