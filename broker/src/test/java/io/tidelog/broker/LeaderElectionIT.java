package io.tidelog.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's own {@code kafka-leader-election} on three brokers (issue 20): a preferred election gives
 * a partition back to its first replica once it is in sync again, and an unclean one gives an
 * offline partition, whose only in-sync replica is gone, to a live replica outside the ISR.
 */
class LeaderElectionIT {
  private static final Duration WITHIN = Duration.ofSeconds(60);

  @TempDir Path dir;
  private EtcdServer etcd;
  private final TestBroker[] brokers = new TestBroker[3];

  @BeforeEach
  void start() throws Exception {
    etcd = EtcdServer.start(dir.resolve("etcd"));
    for (int id = 0; id < 3; id++) {
      brokers[id] = broker(id);
    }
  }

  private TestBroker broker(int id) throws Exception {
    return TestBroker.member(dir.resolve("logs-" + id), id, etcd);
  }

  @AfterEach
  void stop() throws Exception {
    for (TestBroker broker : brokers) {
      if (broker != null) {
        broker.close();
      }
    }
    etcd.close();
  }

  private Admin admin() {
    for (TestBroker broker : brokers) {
      if (broker != null) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()));
      }
    }
    throw new IllegalStateException("no broker runs");
  }

  private TopicPartitionInfo partition(String topic) throws Exception {
    try (Admin admin = admin()) {
      TopicDescription description =
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      return description.partitions().get(0);
    }
  }

  private Optional<Integer> leader(String topic) throws Exception {
    Node leader = partition(topic).leader();
    return leader == null || leader.id() < 0 ? Optional.empty() : Optional.of(leader.id());
  }

  private List<Integer> isr(String topic) throws Exception {
    return partition(topic).isr().stream().map(Node::id).toList();
  }

  private void stopBroker(int id) throws Exception {
    brokers[id].close();
    brokers[id] = null;
  }

  private ApacheKafka.ToolRun leaderElection(String type, String topic) throws Exception {
    TestBroker any = brokers[0] != null ? brokers[0] : brokers[2];
    return ApacheKafka.tool(
        "",
        "org.apache.kafka.tools.LeaderElectionCommand",
        "--bootstrap-server",
        any.bootstrap(),
        "--election-type",
        type,
        "--topic",
        topic,
        "--partition",
        "0");
  }

  @Test
  void aPreferredElectionGivesThePartitionBackToItsFirstReplica() throws Exception {
    try (Admin admin = admin()) {
      admin
          .createTopics(List.of(new NewTopic("preferred", Map.of(0, List.of(0, 1, 2)))))
          .all()
          .get();
    }
    await().atMost(WITHIN).until(() -> isr("preferred").size() == 3);
    assertThat(leader("preferred")).contains(0);

    stopBroker(0);
    await().atMost(WITHIN).until(() -> leader("preferred").filter(l -> l != 0).isPresent());
    brokers[0] = broker(0);
    await().atMost(WITHIN).until(() -> isr("preferred").contains(0));
    assertThat(leader("preferred")).isNotEqualTo(Optional.of(0)); // no automatic rebalance

    ApacheKafka.ToolRun run = leaderElection("PREFERRED", "preferred");
    assertThat(run.exitStatus()).as(run.output()).isZero();
    assertThat(run.output())
        .contains("Successfully completed leader election (PREFERRED) for partitions preferred-0");
    await().atMost(WITHIN).until(() -> leader("preferred").equals(Optional.of(0)));

    ApacheKafka.ToolRun again = leaderElection("PREFERRED", "preferred");
    assertThat(again.output()).contains("Valid replica already elected for partitions preferred-0");
  }

  @Test
  void anUncleanElectionGivesAnOfflinePartitionToALiveReplicaOutsideTheIsr() throws Exception {
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic("unclean", Map.of(0, List.of(1, 2))))).all().get();
    }
    await().atMost(WITHIN).until(() -> isr("unclean").size() == 2);
    stopBroker(2);
    await().atMost(WITHIN).until(() -> isr("unclean").equals(List.of(1)));
    stopBroker(1);
    await().atMost(WITHIN).until(() -> leader("unclean").isEmpty());
    brokers[2] = broker(2);
    // unclean.leader.election.enable is false: broker 2, out of the ISR, does not lead by itself
    ApacheKafka.ToolRun preferred = leaderElection("PREFERRED", "unclean");
    assertThat(preferred.output()).contains("unclean-0", "PreferredLeaderNotAvailableException");
    assertThat(leader("unclean")).isEmpty();

    ApacheKafka.ToolRun run = leaderElection("UNCLEAN", "unclean");
    assertThat(run.exitStatus()).as(run.output()).isZero();
    assertThat(run.output())
        .contains("Successfully completed leader election (UNCLEAN) for partitions unclean-0");
    await().atMost(WITHIN).until(() -> leader("unclean").equals(Optional.of(2)));
    assertThat(isr("unclean")).containsExactly(2);
  }
}
