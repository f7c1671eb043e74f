"""confluent-kafka-python's transactions, as its own integration tests use them
(test_commit_transaction, test_abort_transaction, test_send_offsets_committed_transaction):
a committed transaction, an aborted one, and a consume-transform-produce step that commits the
consumer's positions within a transaction. A read_committed consumer must read exactly the
committed records, and the group's committed offsets must be its positions.

Usage: confluent_kafka_transactions.py BOOTSTRAP
"""
import sys
import uuid

from confluent_kafka import Consumer, Producer, libversion
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
print("librdkafka", libversion()[0])
topic = "confluent-txn-" + uuid.uuid4().hex[:8]
admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(60)

producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "txn-" + topic})
producer.init_transactions(60)

producer.begin_transaction()
for i in range(10):
    producer.produce(topic, ("committed-%d" % i).encode(), partition=i % 2)
producer.commit_transaction(60)

producer.begin_transaction()
for i in range(10):
    producer.produce(topic, ("aborted-%d" % i).encode(), partition=i % 2)
assert producer.flush(60) == 0, "records left unsent"
producer.abort_transaction(60)

consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": "g-" + topic,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
    }
)
consumer.subscribe([topic])
values = []
for _ in range(600):  # at most 60 s
    message = consumer.poll(0.1)
    if message is None or message.error():
        continue
    values.append(message.value().decode())
    if len(values) == 10:
        break
expected = sorted("committed-%d" % i for i in range(10))
assert sorted(values) == expected, values

producer.begin_transaction()
producer.produce(topic, b"transformed", partition=0)
positions = consumer.position(consumer.assignment())
producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 60)
producer.commit_transaction(60)

committed = consumer.committed(consumer.assignment(), 60)
by_partition = {tp.partition: tp.offset for tp in committed}
assert by_partition == {tp.partition: tp.offset for tp in positions}, (committed, positions)
consumer.close()
print("ok", len(values), sorted(by_partition.items()))
