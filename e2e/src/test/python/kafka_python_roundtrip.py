# kafka-python (Debian python3-kafka) against a Tidelog broker: create a topic, produce 100
# gzip-compressed records with acks=all, read them back with assign + seek_to_beginning.
# Usage: /usr/bin/python3 kafka_python_roundtrip.py <bootstrap>
import sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
bootstrap = sys.argv[1]
admin = KafkaAdminClient(bootstrap_servers=bootstrap)
admin.create_topics([NewTopic("py", 1, 1)])
producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type="gzip")
for i in range(100):
    producer.send("py", key=b"k%d" % i, value=b"v%d" % i)
producer.flush()
consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000)
tp = TopicPartition("py", 0)
consumer.assign([tp])
consumer.seek_to_beginning(tp)
values = [m.value for m in consumer]
assert values == [b"v%d" % i for i in range(100)], values[:5]
print("ok", len(values))
