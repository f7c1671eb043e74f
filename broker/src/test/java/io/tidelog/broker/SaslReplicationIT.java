package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tidelog.broker.security.ScramCredentialSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two brokers whose only listener is SASL_PLAINTEXT, with ACLs on: followers authenticate to their
 * leaders with SCRAM-SHA-512 ({@code sasl.mechanism.inter.broker.protocol} and the listener's JAAS
 * username and password) as the super user {@code User:broker}, and replicate; acks=all completes
 * and the ISR is full.
 */
class SaslReplicationIT {
  private static final String BROKER_JAAS =
      "org.apache.kafka.common.security.scram.ScramLoginModule required"
          + " username=\"broker\" password=\"broker-secret\";";
  @TempDir static Path dir;
  static EtcdServer etcd;
  static TestBroker first;
  static TestBroker second;
  static int[] ports = new int[2];

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdServer.start(dir.resolve("etcd"));
    List<ScramCredentialSpec> users =
        List.of(
            ScramCredentialSpec.parse("SCRAM-SHA-512=[name=broker,password=broker-secret]"),
            ScramCredentialSpec.parse("SCRAM-SHA-512=[name=admin,password=admin-secret]"));
    first = broker(0, users);
    second = broker(1, List.of());
  }

  private static TestBroker broker(int id, List<ScramCredentialSpec> users) throws Exception {
    ports[id] = EtcdServer.freePort();
    Map<String, String> config = new HashMap<>();
    config.put("node.id", String.valueOf(id));
    config.put("listeners", "SASL_PLAINTEXT://127.0.0.1:" + ports[id]);
    config.put("security.inter.broker.protocol", "SASL_PLAINTEXT");
    config.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
    config.put("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-512");
    config.put("listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config", BROKER_JAAS);
    config.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
    config.put("super.users", "User:broker;User:admin");
    config.put("tidelog.etcd.endpoints", etcd.endpoint());
    return TestBroker.start(Files.createDirectories(dir.resolve("logs-" + id)), config, users);
  }

  @AfterAll
  static void stop() throws Exception {
    try (EtcdServer e = etcd; // closed last
        TestBroker a = first;
        TestBroker b = second) {
      // all stop
    }
  }

  private static Properties admin() {
    Properties p = new Properties();
    p.put("bootstrap.servers", "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1]);
    p.put("security.protocol", "SASL_PLAINTEXT");
    p.put("sasl.mechanism", "SCRAM-SHA-512");
    p.put(
        "sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required"
            + " username=\"admin\" password=\"admin-secret\";");
    return p;
  }

  @Test
  void followersAuthenticateWithScramAndReplicate() throws Exception {
    try (Admin admin = Admin.create(admin())) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> admin.describeCluster().nodes().get().size() == 2);
      admin.createTopics(List.of(new NewTopic("replicated", 2, (short) 2))).all().get();
      Properties producerProps = admin();
      producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
      try (KafkaProducer<String, String> producer =
          new KafkaProducer<>(producerProps, new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < 50; i++) {
          producer.send(new ProducerRecord<>("replicated", "k" + i, "v" + i)).get();
        }
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  admin
                      .describeTopics(List.of("replicated"))
                      .allTopicNames()
                      .get()
                      .get("replicated")
                      .partitions()
                      .stream()
                      .map(TopicPartitionInfo::isr)
                      .allMatch(isr -> isr.size() == 2));
    }
    assertThat(
            Scrape.of(second.httpPort)
                .value("tidelog_failed_authentication_total", "listener", "SASL_PLAINTEXT"))
        .isZero();
  }
}
