"""confluent-kafka-python over SASL_SSL: produces 50 records and reads them back.

With SCRAM it needs a librdkafka newer than Debian 12's 2.0.2, which repeats the client nonce in
its SCRAM final message; Kafka's SCRAM server refuses that since CVE-2024-56128 was fixed. It
prints the librdkafka it runs on first.

Usage: confluent_kafka_sasl_ssl.py BOOTSTRAP CA_FILE PASSWORD MECHANISM
"""
import sys
import uuid

from confluent_kafka import Consumer, Producer, libversion

bootstrap, ca_file, password, mechanism = sys.argv[1:5]
print("librdkafka", libversion()[0])
security = {
    "bootstrap.servers": bootstrap,
    "security.protocol": "SASL_SSL",
    "sasl.mechanisms": mechanism,
    "sasl.username": "admin",
    "sasl.password": password,
    "ssl.ca.location": ca_file,
}
topic = "confluent-secure-" + uuid.uuid4().hex[:8]
producer = Producer(dict(security, acks="all"))
for i in range(50):
    producer.produce(topic, str(i).encode())
assert producer.flush(60) == 0, "records left unsent"
consumer = Consumer(
    dict(security, **{"group.id": "g-" + topic, "auto.offset.reset": "earliest"})
)
consumer.subscribe([topic])
values = []
for _ in range(600):  # at most 60 s
    message = consumer.poll(0.1)
    if message is None or message.error():
        continue
    values.append(int(message.value()))
    if len(values) == 50:
        break
consumer.close()
assert values == list(range(50)), values
print("ok", len(values))
