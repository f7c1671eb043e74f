"""kafka-python over SASL_SSL with SCRAM-SHA-512: produces 50 records and reads them back.

Usage: kafka_python_sasl_ssl.py BOOTSTRAP CA_FILE PASSWORD
"""
import sys
import uuid

from kafka import KafkaConsumer, KafkaProducer

bootstrap, ca_file, password = sys.argv[1], sys.argv[2], sys.argv[3]
security = dict(
    bootstrap_servers=bootstrap,
    security_protocol="SASL_SSL",
    sasl_mechanism="SCRAM-SHA-512",
    sasl_plain_username="admin",
    sasl_plain_password=password,
    ssl_cafile=ca_file,
)
topic = "py-secure-" + uuid.uuid4().hex[:8]
producer = KafkaProducer(acks="all", **security)
for i in range(50):
    producer.send(topic, str(i).encode())
producer.flush(timeout=60)
producer.close()
consumer = KafkaConsumer(
    topic, auto_offset_reset="earliest", consumer_timeout_ms=20000, **security
)
values = [int(r.value) for r in consumer]
consumer.close()
assert values == list(range(50)), values
print("ok", len(values))
