package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/tidelog dev}: up, status (with each broker's metrics URL), a SIGTERM restart (down,
 * up) and a SIGKILL restart under a sending idempotent producer, after each of which a consumer
 * reads back every acknowledged record exactly once, in order; and how {@code dev up} fails: in one
 * line that says what failed and what to do.
 */
class DevClusterIT {
  private static final String TOPIC = "restarts";
  private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

  @TempDir Path dir;

  @Test
  void acknowledgedRecordsSurviveCleanAndKilledRestarts() throws Exception {
    try (DevCluster cluster = new DevCluster(dir)) {
      String bootstrap = cluster.up();
      assertThat(bootstrap).isEqualTo("127.0.0.1:" + cluster.port);
      String metrics = "http://127.0.0.1:" + (cluster.port + 1000) + "/metrics";
      assertThat(cluster.status().output())
          .contains("broker 0: running")
          .contains(bootstrap)
          .contains("metrics " + metrics);
      HttpResponse<String> scrape =
          HttpClient.newHttpClient()
              .send(HttpRequest.newBuilder(URI.create(metrics)).build(), BodyHandlers.ofString());
      assertThat(scrape.statusCode()).isEqualTo(200);
      assertThat(scrape.body()).contains("tidelog_connections");
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
      }
      produce(bootstrap, 0, 1000);

      // SIGTERM: a clean shutdown leaves Kafka's clean-shutdown marker, then everything is back
      assertThat(cluster.down().output()).contains("stopped");
      assertThat(cluster.dataDir().resolve(".kafka_cleanshutdown")).exists();
      assertThat(cluster.status().exitCode()).isEqualTo(3);
      assertThat(cluster.up()).isEqualTo(bootstrap);
      assertThat(consume(bootstrap, 1000)).isEqualTo(expected(0, 1000));

      // SIGKILL while one idempotent producer is sending: it retries across the restart, and the
      // broker's producer state (snapshot plus log) drops the batches that had already landed
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        for (int i = 1000; i < 3000; i++) {
          acks.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, "v" + i)));
          if (i == 1500) { // batches are in flight now: no flush before the kill
            cluster.kill();
            assertThat(cluster.dataDir().resolve(".kafka_cleanshutdown")).doesNotExist();
            assertThat(cluster.up()).isEqualTo(bootstrap);
          }
        }
        for (Future<RecordMetadata> ack : acks) {
          ack.get(120, TimeUnit.SECONDS);
        }
      }
      assertThat(consume(bootstrap, 3000)).isEqualTo(expected(0, 3000));
      assertThat(cluster.run("logs").output()).contains("unclean");
    }
  }

  @Test
  void threeBrokersStatusShowsTheControllerAndEachPartitionAndAKilledLeaderIsReplaced()
      throws Exception {
    try (DevCluster cluster = new DevCluster(dir, 3)) {
      String bootstrap = cluster.up();
      assertThat(bootstrap.split(",")).hasSize(3);
      try (Admin admin =
          Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        admin
            .createTopics(
                List.of(
                    new NewTopic("spread", 1, (short) 3)
                        .configs(Map.of("min.insync.replicas", "2"))))
            .all()
            .get();
      }
      try (KafkaProducer<String, String> producer = producer(bootstrap)) {
        for (int i = 0; i < 100; i++) {
          producer.send(new ProducerRecord<>("spread", "v" + i));
        }
        producer.flush();
      }

      // Every replica is in sync with all 100 records, and the leader's HW is 100
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                List<String> row = row(cluster, "spread-0");
                assertThat(row.get(4).split(",")).hasSize(3);
                assertThat(row.subList(5, row.size()))
                    .containsExactly("100", "0:100", "1:100", "2:100");
              });
      assertThat(cluster.status().output()).containsPattern("controller: broker [0-2]");
      String leader = row(cluster, "spread-0").get(1);

      // dev kill: another ISR member leads, the ISR drops the killed broker
      assertThat(cluster.run("kill", leader).exitCode()).isZero();
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                List<String> row = row(cluster, "spread-0");
                assertThat(row.get(1)).isNotEqualTo(leader).isNotEqualTo("none");
                assertThat(row.get(4).split(",")).hasSize(2).doesNotContain(leader);
              });

      // dev start: it catches up and re-enters the ISR
      assertThat(cluster.run("start", leader).exitCode()).isZero();
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(row(cluster, "spread-0").get(4).split(",")).hasSize(3));
    }
  }

  /** The {@code dev status} row of {@code partition}: its columns, split on whitespace. */
  private static List<String> row(DevCluster cluster, String partition) throws Exception {
    return cluster
        .status()
        .output()
        .lines()
        .filter(line -> line.startsWith(partition + " "))
        .map(line -> List.of(line.trim().split("\\s+")))
        .findFirst()
        .orElseThrow(() -> new AssertionError(partition + " is not in dev status"));
  }

  private static KafkaProducer<String, String> producer(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  private static void produce(String bootstrap, int from, int to) throws Exception {
    try (KafkaProducer<String, String> producer = producer(bootstrap)) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = from; i < to; i++) {
        acks.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, "v" + i)));
      }
      for (int i = 0; i < acks.size(); i++) {
        assertThat(acks.get(i).get().offset()).isEqualTo(from + i);
      }
    }
  }

  private static List<String> consume(String bootstrap, int expected) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      consumer.assign(List.of(TP));
      consumer.seekToBeginning(List.of(TP));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (values.size() < expected && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
          values.add(record.value());
        }
      }
    }
    return values;
  }

  private static List<String> expected(int from, int to) {
    List<String> values = new ArrayList<>();
    for (int i = from; i < to; i++) {
      values.add("v" + i);
    }
    return values;
  }

  /** TIDELOG_DEV_DIR is bin/tidelog's; a broker must not take it for a config (dev.dir). */
  @Test
  void theDevDirMayComeFromTheEnvironment() throws Exception {
    try (DevCluster cluster = new DevCluster(dir)) {
      DevCluster.Result up =
          DevCluster.exec(
              List.of(
                  DevCluster.REPO.resolve("bin/tidelog").toString(),
                  "dev",
                  "up",
                  "--port",
                  String.valueOf(cluster.port)),
              Path.of("/dev/null"),
              Map.of("TIDELOG_DEV_DIR", dir.toString()));
      assertThat(up.exitCode()).as("dev up: %s", up.errors()).isZero();
      assertThat(up.output().strip()).isEqualTo("127.0.0.1:" + cluster.port);
      assertThat(cluster.status().output()).contains("broker 0: running");
    }
  }

  @Test
  void upWithAPortInUseSaysWhichInOneLineAndStartsNothing() throws Exception {
    DevCluster cluster = new DevCluster(dir);
    try (ServerSocket taken =
        new ServerSocket(cluster.port + 1000, 1, InetAddress.getLoopbackAddress())) {
      DevCluster.Result result = cluster.run("up", "--port", String.valueOf(cluster.port));

      assertThat(result.exitCode()).isEqualTo(2);
      assertThat(result.output()).isEmpty();
      assertThat(result.errors().lines())
          .last()
          .asString()
          .startsWith(
              "tidelog: port "
                  + (cluster.port + 1000)
                  + " (broker 0's health and metrics port) is in use by another process;")
          .contains("--port");
      assertThat(dir.resolve("etcd/pid")).doesNotExist();
    }
  }

  @Test
  void upWhoseEtcdCannotStartSaysWhyInOneLine() throws Exception {
    DevCluster cluster = new DevCluster(dir);
    Files.createDirectories(dir.resolve("etcd"));
    Files.writeString(dir.resolve("etcd/data"), "not a directory");

    DevCluster.Result result = cluster.run("up", "--port", String.valueOf(cluster.port));

    assertThat(result.exitCode()).isEqualTo(2);
    assertThat(result.errors().lines())
        .last()
        .asString()
        .startsWith("tidelog: etcd exited at start: ")
        .contains("etcdmain: error listing data dir")
        .endsWith("whole log: " + dir.resolve("etcd/etcd.log"));
    assertThat(dir.resolve("broker-0")).doesNotExist();
  }

  /**
   * A build that fails (here a source file that does not compile, in a copy of the checkout with
   * nothing built) ends {@code dev up} with the compiler's complaint and where the whole output is.
   */
  @Test
  void upWhoseBuildFailsNamesTheCompilerErrorAndTheLog() throws Exception {
    Path checkout = dir.resolve("checkout");
    copySources(checkout);
    Path broken = checkout.resolve("broker/src/main/java/io/tidelog/broker/Broken.java");
    Files.writeString(broken, "class Broken {\n");

    DevCluster.Result result =
        DevCluster.exec(
            List.of(
                checkout.resolve("bin/tidelog").toString(),
                "dev",
                "up",
                "--dir",
                dir.resolve("cluster").toString(),
                "--port",
                String.valueOf(new DevCluster(dir).port)));

    assertThat(result.exitCode()).isEqualTo(2);
    assertThat(result.errors().lines())
        .last()
        .asString()
        .startsWith("tidelog: the build failed: [ERROR] " + broken + ":[")
        .contains("reached end of file while parsing")
        .endsWith("(whole output: " + checkout.resolve("target/tidelog-build.log") + ")");
    assertThat(dir.resolve("cluster/etcd")).doesNotExist();
  }

  /** What building the broker reads: the poms, {@code bin/} and the broker's main sources. */
  private static void copySources(Path to) throws IOException {
    List<Path> sources = new ArrayList<>(List.of(Path.of("pom.xml"), Path.of("bin")));
    for (String module : List.of("broker", "operator", "e2e", "bench")) {
      sources.add(Path.of(module, "pom.xml"));
    }
    sources.add(Path.of("broker/src/main"));
    for (Path source : sources) {
      try (Stream<Path> files = Files.walk(DevCluster.REPO.resolve(source))) {
        for (Path file : (Iterable<Path>) files::iterator) {
          Path target = to.resolve(DevCluster.REPO.relativize(file).toString());
          Files.createDirectories(target.getParent());
          if (!Files.isDirectory(file)) {
            Files.copy(file, target, StandardCopyOption.COPY_ATTRIBUTES);
          }
        }
      }
    }
  }

  @Test
  void aBrokerWithAnUnknownConfigKeyRefusesToStartAndNamesIt() throws Exception {
    Path config =
        Files.writeString(
            dir.resolve("server.properties"),
            "node.id=0\nlog.dirs=" + dir.resolve("data") + "\nlog.retention.hourz=5\n");

    DevCluster.Result result =
        DevCluster.exec(
            List.of(
                DevCluster.REPO.resolve("bin/tidelog").toString(),
                "broker",
                "--config",
                config.toString()));

    assertThat(result.exitCode()).isEqualTo(2);
    assertThat(result.errors()).contains("Unknown broker config 'log.retention.hourz'");
    assertThat(dir.resolve("data")).doesNotExist();
  }
}
