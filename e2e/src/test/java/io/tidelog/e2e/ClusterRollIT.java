package io.tidelog.e2e;

import static io.tidelog.e2e.DevClusterResource.awaitReady;
import static io.tidelog.e2e.DevClusterResource.edit;
import static io.tidelog.e2e.DevClusterResource.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.tidelog.broker.config.DynamicBrokerConfig;
import io.tidelog.operator.OperatorSettings.Controller;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.cluster.ClusterModel;
import io.tidelog.operator.cluster.DynamicConfigs;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Cluster reconciler's rolling restarts over three real brokers: the mock API holds the Cluster
 * and its pods ({@link BrokerPods} plays the StatefulSet controller), and the operator asks the
 * real brokers, through Kafka's Admin, whether each restart is safe.
 */
class ClusterRollIT {
  private static final String NS = "kafka";
  private static final int RECORDS = 1_000;
  private static final ConfigResource EVENTS_TOPIC =
      new ConfigResource(ConfigResource.Type.TOPIC, "events");
  private static final ConfigResource CLUSTER_DEFAULT =
      new ConfigResource(ConfigResource.Type.BROKER, "");

  /** A topic whose follower replicas are throttled, for traffic a restarted broker catches up. */
  private static final String BACKLOG = "backlog";

  private static final int BACKLOG_RECORDS = 150;
  private static final String THROTTLE_KEY = "follower.replication.throttled.rate";
  private static final long THROTTLE = 150_000;

  @TempDir Path dir;

  /**
   * The operator's list of the keys brokers take live is the brokers' own, but for those a broker
   * takes only as its own (the listeners, which the operator owns) and {@code num.io.threads},
   * which a broker reads at its start: for it the operator rolls the brokers.
   */
  @Test
  void theOperatorAppliesLiveExactlyTheKeysTheBrokersTakeLive() {
    Set<String> live = new java.util.HashSet<>(DynamicBrokerConfig.DYNAMIC);
    live.removeAll(DynamicBrokerConfig.PER_BROKER);
    live.remove("num.io.threads");
    assertThat(DynamicConfigs.KEYS).containsExactlyInAnyOrderElementsOf(live);
  }

  /**
   * A roll over brokers that each come back behind: while a broker is stopped, {@value
   * #BACKLOG_RECORDS} records of 10 kB go to a topic whose follower replicas are throttled ({@code
   * follower.replication.throttled.replicas=*}) at {@value #THROTTLE} B/s (a {@code spec.config}
   * the operator sets live), so that each broker takes about 10 s to get back into every ISR. What
   * the brokers report ({@link BrokerTimeline}) shows the order of the restarts, each broker out of
   * an ISR after its restart, and no later pod deleted before it was back in every one.
   */
  @Test
  void aConfigChangeRollsOneBrokerAtATimeControllerLastEachAfterTheLastIsBackInEveryIsr()
      throws Exception {
    try (DevCluster cluster = new DevCluster(dir, 3)) {
      // 32 KiB a partition a fetch, so that the throttle, checked before each fetch, holds
      String bootstrap = cluster.up("replica.fetch.max.bytes=32768");
      try (Admin admin =
              Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
          MockKubernetes kubernetes =
              new MockKubernetes(
                  Set.of(Controller.CLUSTER), Duration.ofSeconds(5), c -> bootstrap)) {
        KubernetesClient client = kubernetes.client;
        admin
            .createTopics(
                List.of(
                    new NewTopic("events", 6, (short) 3)
                        .configs(Map.of("min.insync.replicas", "2"))))
            .all()
            .get(30, TimeUnit.SECONDS);
        admin
            .createTopics(
                List.of(
                    new NewTopic(BACKLOG, 3, (short) 3)
                        .configs(Map.of("follower.replication.throttled.replicas", "*"))))
            .all()
            .get(30, TimeUnit.SECONDS);
        produce(bootstrap);

        // Given a Cluster of the three brokers, whose pods are Ready,
        client
            .resource(
                Resources.cluster(
                    NS,
                    "dev",
                    "replicas: 3\nstorage: {size: 1Gi}\netcd: {endpoints: ['http://127.0.0.1:2379']}"))
            .create();
        try (BrokerPods pods = new BrokerPods(client, NS, "dev-broker", cluster)) {
          awaitReady(client, Duration.ofSeconds(60));
          int controller = admin.describeCluster().controller().get().id();
          assertThat(get(client).getStatus().controllerId).isEqualTo(controller);
          assertThat(pods.restarts()).isEmpty();

          // When configs the brokers take live change, no broker restarts: every broker has them
          // as the cluster's dynamic default, and an Event says so.
          edit(
              client,
              c -> {
                c.getSpec().config =
                    Map.of("log.retention.ms", "7200000", THROTTLE_KEY, String.valueOf(THROTTLE));
                return c;
              });
          await()
              .atMost(Duration.ofSeconds(60))
              .untilAsserted(
                  () ->
                      assertThat(
                              admin
                                  .describeConfigs(List.of(EVENTS_TOPIC))
                                  .all()
                                  .get()
                                  .get(EVENTS_TOPIC)
                                  .get("retention.ms"))
                          .extracting(ConfigEntry::value, ConfigEntry::source)
                          .containsExactly(
                              "7200000", ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));
          awaitReady(client, Duration.ofSeconds(60));
          assertThat(
                  client.v1().events().inNamespace(NS).list().getItems().stream()
                      .filter(e -> "BrokerConfigUpdated".equals(e.getReason()))
                      .map(Event::getMessage))
              .singleElement()
              .asString()
              .contains("without a restart: ")
              .contains("log.retention.ms=7200000")
              .contains(THROTTLE_KEY + "=" + THROTTLE);
          assertThat(
                  admin
                      .describeConfigs(List.of(CLUSTER_DEFAULT))
                      .all()
                      .get()
                      .get(CLUSTER_DEFAULT)
                      .get(THROTTLE_KEY)
                      .value())
              .isEqualTo(String.valueOf(THROTTLE));
          assertThat(pods.restarts()).isEmpty();

          // When a broker config that needs a restart changes (and the live one goes), while
          // traffic that each broker must catch up on, throttled, arrives while it is stopped,
          pods.whileStopped(id -> produceBacklog(bootstrap));
          List<Map.Entry<Integer, Long>> deletions = new CopyOnWriteArrayList<>();
          List<Integer> order;
          List<BrokerTimeline.Sample> samples;
          try (BrokerTimeline timeline = new BrokerTimeline(bootstrap, List.of("events", BACKLOG));
              Watch watch = client.pods().inNamespace(NS).watch(deletionsInto(deletions))) {
            edit(
                client,
                c -> {
                  c.getSpec().config =
                      Map.of("log.retention.hours", "100", THROTTLE_KEY, String.valueOf(THROTTLE));
                  return c;
                });
            awaitReady(client, Duration.ofMinutes(5));
            order = timeline.departures();
            samples = timeline.samples();
          }
          pods.whileStopped(id -> {});

          // then each broker restarts once, one at a time, the controller last, as the brokers
          // saw it (and as the pods went), each with an Event;
          assertThat(order)
              .as("the brokers that left the cluster, in order")
              .hasSize(3)
              .doesNotHaveDuplicates()
              .endsWith(controller)
              .isEqualTo(pods.restarts());
          assertThat(deletions).extracting(Map.Entry::getKey).isEqualTo(order);
          assertThat(pods.mostMissing()).isEqualTo(1);
          // each came back behind, and the next pod went only once it was back in every ISR
          for (int i = 0; i < order.size(); i++) {
            int restarted = order.get(i);
            long departedAt = deletions.get(i).getValue();
            assertThat(samples)
                .as("broker %d, live and out of an ISR after its restart", restarted)
                .anyMatch(s -> s.sentNanos() > departedAt && s.lagging(restarted));
            if (i + 1 < order.size()) {
              long nextDeleted = deletions.get(i + 1).getValue();
              assertThat(samples)
                  .as(
                      "broker %d out of an ISR after the pod of broker %d was deleted",
                      restarted, order.get(i + 1))
                  .noneMatch(s -> s.sentNanos() > nextDeleted && s.lagging(restarted));
            }
          }
          List<Event> events =
              client.v1().events().inNamespace(NS).list().getItems().stream()
                  .filter(e -> "BrokerRestart".equals(e.getReason()))
                  .toList();
          assertThat(events)
              .hasSize(3)
              .allSatisfy(
                  e ->
                      assertThat(e.getMessage())
                          .contains("out of date: ConfigChange (server.properties changed)"));
          // and every acknowledged record is still there. The live config is gone from the
          // brokers' dynamic default (these brokers read their own files, not the ConfigMap).
          assertThat(count(bootstrap)).isEqualTo(RECORDS);
          assertThat(
                  admin
                      .describeConfigs(List.of(EVENTS_TOPIC))
                      .all()
                      .get()
                      .get(EVENTS_TOPIC)
                      .get("retention.ms"))
              .extracting(ConfigEntry::value, ConfigEntry::source)
              .containsExactly("604800000", ConfigEntry.ConfigSource.DEFAULT_CONFIG);

          // Given broker 2 killed behind its pod's back, so that its partitions are
          // under-replicated,
          cluster.run("kill", "2");
          await().atMost(Duration.ofSeconds(60)).until(() -> underReplicated(admin) > 0);

          // when a manual roll is asked for, the first broker to restart is the dead one:
          // restarting
          // either live broker would take the partitions below their min.insync.replicas, 2;
          edit(
              client,
              c -> {
                c.getMetadata().getAnnotations().put(ClusterModel.MANUAL_ROLL_ANNOTATION, "1");
                return c;
              });
          await().atMost(Duration.ofSeconds(60)).until(() -> pods.restarts().size() >= 4);
          assertThat(pods.restarts().get(3)).isEqualTo(2);

          // then, once it has caught up, the roll goes on to the end.
          awaitReady(client, Duration.ofMinutes(3));
          assertThat(pods.restarts()).hasSize(6);
          assertThat(
                  client.v1().events().inNamespace(NS).list().getItems().stream()
                      .filter(e -> "BrokerRestart".equals(e.getReason()))
                      .map(Event::getMessage)
                      .filter(m -> m.contains("ManualRollingUpdate")))
              .as("the manual roll's restarts say so")
              .hasSize(3);
          assertThat(pods.mostMissing()).isEqualTo(1);
          assertThat(count(bootstrap)).isEqualTo(RECORDS);

          // A scale-down below a topic's replication factor is refused and changes nothing.
          edit(
              client,
              c -> {
                c.getSpec().replicas = 2;
                return c;
              });
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  () ->
                      Conditions.find(get(client).getStatus().conditions, Conditions.ERROR)
                          .map(
                              e ->
                                  e.getMessage()
                                      .startsWith(
                                          "spec.replicas: cannot scale down from 3 to 2: topic "))
                          .orElse(false));
          assertThat(
                  client
                      .apps()
                      .statefulSets()
                      .inNamespace(NS)
                      .withName("dev-broker")
                      .get()
                      .getSpec()
                      .getReplicas())
              .isEqualTo(3);
        }
      }
    }
  }

  /** A watcher that adds each broker pod deleted, by broker id, with when it heard of it. */
  private static Watcher<Pod> deletionsInto(List<Map.Entry<Integer, Long>> deletions) {
    return new Watcher<>() {
      @Override
      public void eventReceived(Action action, Pod pod) {
        if (action == Action.DELETED) {
          String name = pod.getMetadata().getName();
          deletions.add(
              Map.entry(
                  Integer.parseInt(name.substring(name.lastIndexOf('-') + 1)), System.nanoTime()));
        }
      }

      @Override
      public void onClose(WatcherException cause) {}
    };
  }

  /** {@value #BACKLOG_RECORDS} records of 10 kB to {@link #BACKLOG}, acknowledged by its ISR. */
  private static void produceBacklog(String bootstrap) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      String value = "x".repeat(10_000);
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = 0; i < BACKLOG_RECORDS; i++) {
        acks.add(producer.send(new ProducerRecord<>(BACKLOG, value)));
      }
      for (Future<RecordMetadata> ack : acks) {
        ack.get(60, TimeUnit.SECONDS);
      }
    } catch (Exception e) {
      throw new IllegalStateException("the backlog was not acknowledged", e);
    }
  }

  private static long underReplicated(Admin admin) throws Exception {
    return admin
        .describeTopics(List.of("events"))
        .allTopicNames()
        .get(10, TimeUnit.SECONDS)
        .get("events")
        .partitions()
        .stream()
        .filter(p -> p.isr().size() < p.replicas().size())
        .count();
  }

  private static void produce(String bootstrap) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = 0; i < RECORDS; i++) {
        acks.add(producer.send(new ProducerRecord<>("events", "k" + i, "v" + i)));
      }
      for (Future<RecordMetadata> ack : acks) {
        ack.get(30, TimeUnit.SECONDS);
      }
    }
  }

  /** The records in "events", read from the beginning of every partition. */
  private static long count(String bootstrap) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        partitions.add(new TopicPartition("events", i));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long count = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (count < RECORDS && System.nanoTime() < deadline) {
        count += consumer.poll(Duration.ofMillis(200)).count();
      }
      return count;
    }
  }
}
