package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/tidelog dev up --secure}: two brokers with SASL_SSL for clients and mutual TLS between
 * them, ACLs on, etcd over TLS. The client config it prints serves kafka-clients as it is (a
 * replicated topic is written and read, its ISR full over the mTLS listener), kcat takes its
 * kcat.conf (PLAIN) as it is, kcat and confluent-kafka-python authenticate with PLAIN on Debian's
 * librdkafka and with SCRAM-SHA-512 on a newer one (Debian's 2.0.2 repeats SCRAM's client nonce,
 * see {@code bin/install-prereqs}), kafka-python with SCRAM-SHA-512, and a wrong password is
 * refused.
 */
class DevSecureIT {
  @TempDir Path dir;

  @Test
  void aSecureDevClusterServesKafkaClientsKcatAndKafkaPython() throws Exception {
    try (DevCluster cluster = new DevCluster(dir, 2)) {
      DevCluster.Result up =
          cluster.run("up", "--secure", "--brokers", "2", "--port", String.valueOf(cluster.port));
      assertThat(up.exitCode()).as(up.errors()).isZero();
      List<String> lines = up.output().strip().lines().toList();
      String bootstrap = lines.get(0);
      assertThat(bootstrap)
          .isEqualTo("127.0.0.1:" + cluster.port + ",127.0.0.1:" + (cluster.port + 1));
      assertThat(lines.get(1)).contains(dir.resolve("client.properties").toString());

      Properties client = new Properties();
      try (Reader reader = Files.newBufferedReader(dir.resolve("client.properties"))) {
        client.load(reader);
      }
      client.put("bootstrap.servers", bootstrap);
      try (Admin admin = Admin.create(client)) {
        admin.createTopics(List.of(new NewTopic("secure", 1, (short) 2))).all().get();
        try (KafkaProducer<String, String> producer =
            new KafkaProducer<>(client, new StringSerializer(), new StringSerializer())) {
          for (int i = 0; i < 20; i++) {
            producer.send(new ProducerRecord<>("secure", "v" + i)).get();
          }
        }
        Awaitility.await()
            .atMost(Duration.ofSeconds(60))
            .until(
                () -> {
                  TopicDescription d =
                      admin.describeTopics(List.of("secure")).allTopicNames().get().get("secure");
                  return d.partitions().get(0).isr().size() == 2;
                });
      }
      List<String> read = new ArrayList<>();
      try (KafkaConsumer<String, String> consumer =
          new KafkaConsumer<>(client, new StringDeserializer(), new StringDeserializer())) {
        TopicPartition tp = new TopicPartition("secure", 0);
        consumer.assign(List.of(tp));
        consumer.seekToBeginning(List.of(tp));
        Awaitility.await()
            .atMost(Duration.ofSeconds(60))
            .until(
                () -> {
                  consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.value()));
                  return read.size() >= 20;
                });
      }
      assertThat(read).hasSize(20).startsWith("v0", "v1");

      // kcat.conf as printed (PLAIN), on Debian's librdkafka
      DevCluster.Result kcat =
          DevCluster.exec(
              List.of(
                  "kcat",
                  "-F",
                  dir.resolve("kcat.conf").toString(),
                  "-b",
                  bootstrap,
                  "-L",
                  "-t",
                  "secure"));
      assertThat(kcat.exitCode()).as(kcat.errors()).isZero();
      assertThat(kcat.output()).contains("topic \"secure\" with 1 partitions");

      // SCRAM-SHA-512, on a librdkafka without 2.0.2's nonce bug
      Map<String, String> newer = Map.of("LD_LIBRARY_PATH", DevCluster.librdkafka().toString());
      DevCluster.Result version =
          DevCluster.exec(List.of("kcat", "-V"), Path.of("/dev/null"), newer);
      assertThat(version.output()).contains("librdkafka " + DevCluster.LIBRDKAFKA_VERSION);
      Path message = dir.resolve("message");
      Files.writeString(message, "over scram\n");
      DevCluster.Result scramProduce =
          DevCluster.exec(kcatScram(dir, bootstrap, "-P", "-t", "secure"), message, newer);
      assertThat(scramProduce.exitCode()).as(scramProduce.errors()).isZero();
      DevCluster.Result scramConsume =
          DevCluster.exec(
              kcatScram(dir, bootstrap, "-C", "-t", "secure", "-o", "-1", "-c", "1", "-e", "-q"),
              Path.of("/dev/null"),
              newer);
      assertThat(scramConsume.exitCode()).as(scramConsume.errors()).isZero();
      assertThat(scramConsume.output()).isEqualTo("over scram\n");

      String password = Files.readString(dir.resolve("admin.password")).strip();
      DevCluster.Result python =
          DevCluster.exec(
              List.of(
                  "/usr/bin/python3",
                  DevCluster.REPO
                      .resolve("e2e/src/test/python/kafka_python_sasl_ssl.py")
                      .toString(),
                  bootstrap,
                  dir.resolve("tls/ca.pem").toString(),
                  password));
      assertThat(python.exitCode()).as(python.errors()).isZero();
      assertThat(python.output()).contains("ok 50");
      DevCluster.Result confluentPlain = confluent(dir, bootstrap, password, "PLAIN", Map.of());
      assertThat(confluentPlain.exitCode()).as(confluentPlain.errors()).isZero();
      assertThat(confluentPlain.output()).contains("ok 50");
      DevCluster.Result confluentScram =
          confluent(dir, bootstrap, password, "SCRAM-SHA-512", newer);
      assertThat(confluentScram.exitCode()).as(confluentScram.errors()).isZero();
      assertThat(confluentScram.output())
          .contains("librdkafka " + DevCluster.LIBRDKAFKA_VERSION)
          .contains("ok 50");

      Properties wrong = new Properties();
      wrong.putAll(client);
      wrong.put(
          "sasl.jaas.config",
          "org.apache.kafka.common.security.scram.ScramLoginModule required"
              + " username=\"admin\" password=\"not-it\";");
      try (Admin refused = Admin.create(wrong)) {
        ExecutionException e =
            assertThrows(ExecutionException.class, () -> refused.describeCluster().nodes().get());
        assertThat(e.getCause()).isInstanceOf(SaslAuthenticationException.class);
      }
      assertThat(cluster.status().output()).contains("https://127.0.0.1:");
    }
  }

  /** kcat with kcat.conf, switched to SCRAM-SHA-512, and {@code args}. */
  private static List<String> kcatScram(Path dir, String bootstrap, String... args) {
    List<String> command = new ArrayList<>();
    command.addAll(
        List.of(
            "kcat",
            "-F",
            dir.resolve("kcat.conf").toString(),
            "-X",
            "sasl.mechanisms=SCRAM-SHA-512",
            "-b",
            bootstrap));
    command.addAll(List.of(args));
    return command;
  }

  private static DevCluster.Result confluent(
      Path dir, String bootstrap, String password, String mechanism, Map<String, String> env)
      throws Exception {
    return DevCluster.exec(
        List.of(
            "/usr/bin/python3",
            DevCluster.REPO.resolve("e2e/src/test/python/confluent_kafka_sasl_ssl.py").toString(),
            bootstrap,
            dir.resolve("tls/ca.pem").toString(),
            password,
            mechanism),
        Path.of("/dev/null"),
        env);
  }
}
