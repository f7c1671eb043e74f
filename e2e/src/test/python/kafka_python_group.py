# kafka-python (Debian python3-kafka) in a consumer group on a Tidelog broker: two members of one
# group, each polling in its own thread, share a 4-partition topic, each message reaching one of
# them; they commit, and a later member of the group resumes after the commit.
# Usage: /usr/bin/python3 kafka_python_group.py <bootstrap>
import sys
import threading
import time
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

bootstrap = sys.argv[1]
admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic("py-group", 4, 1)])


def member():
    return KafkaConsumer("py-group", bootstrap_servers=bootstrap, group_id="py-readers",
                         auto_offset_reset="earliest", enable_auto_commit=False,
                         session_timeout_ms=10000, heartbeat_interval_ms=1000)


def produce(prefix, count):
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(count):
        producer.send("py-group", value=b"%s-%d" % (prefix, i), partition=i % 4)
    producer.flush()
    producer.close()


class Member(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.consumer = member()
        self.received = []
        self.assigned = set()
        self.stop = threading.Event()

    def run(self):
        deadline = time.time() + 90
        while not self.stop.is_set() and time.time() < deadline:
            for records in self.consumer.poll(timeout_ms=200).values():
                self.received.extend(r.value for r in records)
            self.assigned = set(self.consumer.assignment())
        self.consumer.commit()
        self.consumer.close()


def wait_for(condition, what):
    deadline = time.time() + 60
    while not condition():
        assert time.time() < deadline, what
        time.sleep(0.1)


a, b = Member(), Member()
a.start()
b.start()
wait_for(lambda: len(a.assigned) == 2 and len(b.assigned) == 2, "the group never split 2 + 2")
assert not (a.assigned & b.assigned), (a.assigned, b.assigned)

produce(b"first", 100)
wait_for(lambda: len(a.received) + len(b.received) >= 100, "not all 100 arrived")
time.sleep(1)  # anything delivered twice would arrive now
everything = a.received + b.received
assert sorted(everything) == sorted(b"first-%d" % i for i in range(100)), everything[:5]
assert a.received and b.received, "one member got nothing"
for m in (a, b):
    m.stop.set()
    m.join(30)

produce(b"second", 8)
c = Member()
c.start()
wait_for(lambda: len(c.received) >= 8, "the resumed member got fewer than 8")
time.sleep(1)
assert sorted(c.received) == sorted(b"second-%d" % i for i in range(8)), c.received
c.stop.set()
c.join(30)
check = KafkaConsumer(bootstrap_servers=bootstrap, group_id="py-readers", enable_auto_commit=False)
committed = sum(check.committed(TopicPartition("py-group", p)) or 0 for p in range(4))
assert committed == 108, committed
check.close()
print("ok group", len(everything), len(c.received))
