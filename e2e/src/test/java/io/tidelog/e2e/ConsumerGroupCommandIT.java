package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's own {@code kafka-consumer-groups} tool ({@code ConsumerGroupCommand} from kafka-tools,
 * run by {@code bench/kafka-cluster tools}) against a broker started by {@code bin/tidelog dev up}.
 */
class ConsumerGroupCommandIT {
  private static final String TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";

  @TempDir Path dir;

  private static DevCluster.Result consumerGroups(String bootstrap, String... args)
      throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                DevCluster.REPO.resolve("bench/kafka-cluster").toString(),
                "tools",
                TOOL,
                "--bootstrap-server",
                bootstrap));
    command.addAll(List.of(args));
    DevCluster.Result result = DevCluster.exec(command);
    assertThat(result.exitCode()).as("%s: %s", command, result.errors()).isZero();
    return result;
  }

  @Test
  void describesLagAndResetsOffsetsToTheEarliest() throws Exception {
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      // Given 10 records in each of 2 partitions, and a group that committed 7 and 4 of them
      TopicPartition p0 = new TopicPartition("tools", 0);
      TopicPartition p1 = new TopicPartition("tools", 1);
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic("tools", 2, (short) 1))).all().get();
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaProducer<String, String> producer =
            new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
          for (int i = 0; i < 20; i++) {
            producer.send(new ProducerRecord<>("tools", i % 2, null, "v" + i));
          }
        }
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "tool-readers");
        try (KafkaConsumer<String, String> consumer =
            new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
          consumer.commitSync(
              Map.of(p0, new OffsetAndMetadata(7), p1, new OffsetAndMetadata(4)),
              Duration.ofSeconds(60));
        }

        // When kafka-consumer-groups lists and describes the group
        assertThat(consumerGroups(bootstrap, "--list").output()).contains("tool-readers");
        String described =
            consumerGroups(bootstrap, "--describe", "--group", "tool-readers").output();

        // Then it shows each partition's committed offset, log end offset and lag
        assertThat(described).contains("CURRENT-OFFSET").contains("LOG-END-OFFSET").contains("LAG");
        assertThat(described.lines().filter(l -> l.startsWith("tool-readers")))
            .anyMatch(l -> l.matches("tool-readers\\s+tools\\s+0\\s+7\\s+10\\s+3\\s+.*"))
            .anyMatch(l -> l.matches("tool-readers\\s+tools\\s+1\\s+4\\s+10\\s+6\\s+.*"));

        // When it resets the group to the earliest offsets
        String reset =
            consumerGroups(
                    bootstrap,
                    "--reset-offsets",
                    "--to-earliest",
                    "--execute",
                    "--group",
                    "tool-readers",
                    "--topic",
                    "tools")
                .output();

        // Then the group's committed offsets are 0
        assertThat(reset).contains("NEW-OFFSET");
        Map<TopicPartition, OffsetAndMetadata> committed =
            admin.listConsumerGroupOffsets("tool-readers").partitionsToOffsetAndMetadata().get();
        assertThat(committed.get(p0).offset()).isZero();
        assertThat(committed.get(p1).offset()).isZero();
      }
    }
  }
}
