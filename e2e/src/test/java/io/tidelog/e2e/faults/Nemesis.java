package io.tidelog.e2e.faults;

import io.tidelog.e2e.faults.History.Fault;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Injects one fault at a time into a {@link FaultCluster}, holds it, heals it, and records it. */
final class Nemesis {
  enum Kind {
    /** SIGKILL a broker, then start it again. */
    KILL_BROKER,
    /** SIGSTOP a broker (a long GC pause), then SIGCONT. */
    PAUSE_BROKER,
    /** Cut one broker off from the other brokers (it still reaches etcd and the clients). */
    PARTITION_BROKERS,
    /** Cut one broker off from every etcd member (it still reaches brokers and clients). */
    PARTITION_BROKER_ETCD,
    /**
     * Cut the consumer group's coordinator (or, if unknown, any broker) off from the other brokers
     * and from etcd; clients still reach it.
     */
    ISOLATE_BROKER,
    /** Cut one etcd member off from the other members; brokers still reach all three. */
    PARTITION_ETCD_MEMBER,
    /** SIGKILL an etcd member that is not the leader, then start it again. */
    KILL_ETCD_MEMBER,
    /** SIGKILL the etcd leader, then start it again. */
    KILL_ETCD_LEADER,
    /** Fill a broker's log file system, then free it. */
    DISK_FULL,
    /** SIGTERM (a controlled shutdown) and restart every broker, one after the other. */
    ROLLING_RESTART
  }

  private static final Logger LOG = LoggerFactory.getLogger(Nemesis.class);
  private final FaultCluster cluster;
  private final History history;
  private final Random random;
  private final Workload workload;

  /**
   * @param workload what a rolling restart waits on (every replica in sync again, as the operator
   *     waits before it stops the next broker) and where the group coordinator is
   */
  Nemesis(FaultCluster cluster, History history, Random random, Workload workload) {
    this.cluster = cluster;
    this.history = history;
    this.random = random;
    this.workload = workload;
  }

  /** Injects {@code kind}, holds it for {@code hold}, heals it; returns what it did it to. */
  String inject(Kind kind, Duration hold) throws Exception {
    Node broker = pick(cluster.brokers);
    long start = System.nanoTime();
    String target;
    switch (kind) {
      case KILL_BROKER -> {
        target = broker.name;
        broker.kill();
        Thread.sleep(hold.toMillis());
        broker.start();
      }
      case PAUSE_BROKER -> {
        target = broker.name;
        broker.pause();
        Thread.sleep(hold.toMillis());
        broker.resume();
      }
      case PARTITION_BROKERS -> {
        target = broker.name + " | other brokers";
        partition(broker, cluster.brokers, hold);
      }
      case PARTITION_BROKER_ETCD -> {
        target = broker.name + " | etcd";
        partition(broker, cluster.etcd, hold);
      }
      case ISOLATE_BROKER -> {
        Node coordinator =
            workload.coordinator().map(id -> cluster.brokers.get(id - 1)).orElse(broker);
        target = coordinator.name + " | brokers and etcd";
        partition(
            coordinator,
            Stream.concat(cluster.brokers.stream(), cluster.etcd.stream()).toList(),
            hold);
      }
      case PARTITION_ETCD_MEMBER -> {
        Node member = pick(cluster.etcd);
        target = member.name + " | other etcd members";
        partition(member, cluster.etcd, hold);
      }
      case KILL_ETCD_MEMBER, KILL_ETCD_LEADER -> {
        Node leader = cluster.etcdLeader().orElseGet(() -> pick(cluster.etcd));
        Node member =
            kind == Kind.KILL_ETCD_LEADER
                ? leader
                : pick(cluster.etcd.stream().filter(m -> m != leader).toList());
        target = member.name + (member == leader ? " (leader)" : "");
        member.kill();
        Thread.sleep(hold.toMillis());
        member.start();
        cluster.awaitEtcd(member);
      }
      case DISK_FULL -> {
        target = broker.name;
        cluster.fillDisk(broker);
        Thread.sleep(hold.toMillis());
        cluster.freeDisk(broker);
        if (broker.awaitExit(Duration.ofSeconds(60))) {
          LOG.info("{} exited after its disk filled; starting it, as Kubernetes would", broker);
          broker.start();
          cluster.awaitReady(broker);
        }
      }
      case ROLLING_RESTART -> {
        target = "every broker";
        for (Node each : cluster.brokers) {
          each.stop();
          each.start();
          cluster.awaitReady(each);
          workload.awaitInSync();
        }
      }
      default -> throw new IllegalArgumentException(kind.name());
    }
    history.add(new Fault(kind.name(), target, start, System.nanoTime()));
    LOG.info("fault {} on {} healed", kind, target);
    return target;
  }

  /** Cuts {@code node} off from each of {@code others} (but itself) for {@code hold}. */
  private void partition(Node node, List<Node> others, Duration hold) throws Exception {
    for (Node other : others) {
      if (other != node) {
        cluster.network.cut(node.host, other.host);
      }
    }
    Thread.sleep(hold.toMillis());
    cluster.network.heal();
  }

  private <T> T pick(List<T> from) {
    return from.get(random.nextInt(from.size()));
  }
}
