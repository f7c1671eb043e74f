package io.tidelog.e2e.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tidelog.e2e.faults.History.Fault;
import io.tidelog.e2e.faults.History.Send;
import io.tidelog.e2e.faults.History.Transaction.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The fault-injection suite: a three-broker cluster on a three-member etcd, each in its own network
 * namespace, under the {@link Workload} while the {@link Nemesis} injects faults on a seeded
 * schedule; then the {@link Checker} reads the history.
 *
 * <p>By default (CI) every kind of fault runs once, then a second round while three minutes last,
 * in an order the seed shuffles, in under five minutes. {@code -Dtidelog.faults.minutes=30} runs
 * random faults for that long instead; {@code -Dtidelog.faults.seed=N} repeats a run's schedule.
 * The history is written to {@code target/faults/run-<seed>-<time>/history.json}, beside every
 * node's log.
 *
 * <p>The cluster is secured as a platform team would run it ({@link FaultSecurity}): every client
 * and follower on SASL_SSL, the authorizer on, etcd over TLS with client certificates. {@code
 * -Dtidelog.faults.security=plaintext} runs PLAINTEXT listeners and plain HTTP to etcd instead.
 */
class FaultSuiteIT {
  private static final int BROKERS = 3;
  private static final int PARTITIONS = 6;
  private static final int PRODUCERS = 3;
  private static final int RATE_PER_PRODUCER = 60;
  private static final int ASSIGN_READERS = 2;
  private static final int GROUP_READERS = 2;
  private static final int TRANSACTORS = 2;
  private static final int TRANSACTION_PARTITIONS = 4;
  private static final long CI_FAULT_SECONDS = 180;
  private static final Map<String, String> BROKER_CONFIG =
      Map.of(
          "broker.session.timeout.ms", "6000",
          "replica.lag.time.max.ms", "10000",
          "group.initial.rebalance.delay.ms", "0");

  @Test
  void keepsEveryAcknowledgedRecordUnderFaults() throws Exception {
    boolean available = Network.available();
    if (!available && !"true".equals(System.getenv("CI"))) {
      assumeTrue(false, "network namespaces need root (CAP_NET_ADMIN); the fault suite skipped");
    }
    assertThat(available).as("network namespaces (root and iproute2) for the fault suite").isTrue();
    long seed = Long.getLong("tidelog.faults.seed", System.currentTimeMillis());
    long minutes = Long.getLong("tidelog.faults.minutes", 0);
    Random random = new Random(seed);
    // A new directory each run, so that a repeated seed starts from empty etcd and logs.
    Path dir =
        Files.createDirectories(
            Path.of("target", "faults", "run-" + seed + "-" + System.currentTimeMillis()));
    System.out.printf(
        "fault suite: seed %d (-Dtidelog.faults.seed=%d repeats it), logs in %s%n",
        seed, seed, dir);

    String protocol = System.getProperty("tidelog.faults.security", "sasl_ssl");
    assertThat(protocol).as("tidelog.faults.security").isIn("sasl_ssl", "plaintext");
    FaultSecurity security =
        protocol.equals("sasl_ssl") ? FaultSecurity.create(dir.resolve("tls")) : null;
    System.out.printf("fault suite: %s listeners%n", protocol.toUpperCase(Locale.ROOT));

    History history = new History();
    History transactions = new History();
    List<String> log = new ArrayList<>();
    boolean[] transactionsEnded = {false};
    Path transactionsFile = dir.resolve("history-transactions.json");
    // both written even when the run fails midway, so that a failure leaves its evidence
    history.writtenAfter(
        dir.resolve("history.json"),
        () ->
            transactions.writtenAfter(
                transactionsFile,
                () ->
                    transactionsEnded[0] =
                        run(dir, security, random, minutes, history, transactions, log)));

    Checker.Result result = Checker.check(history);
    List<Send> sends = history.all(Send.class);
    System.out.printf(
        "fault suite, seed %d: %d operations (%d sends, %d acknowledged), %d faults%n%s%n"
            + "unavailability (longest time without an acknowledgement on a partition, s), per kind:%n%s"
            + "anomalies: %d%n%s",
        seed,
        result.operations(),
        sends.size(),
        sends.stream().filter(Send::acked).count(),
        history.all(Fault.class).size(),
        String.join("\n", log),
        Unavailability.report(history, PARTITIONS),
        result.count(),
        result.summary());
    TransactionChecker.Result transactional = TransactionChecker.check(transactions);
    System.out.printf(
        "transactional workload (%s), anomalies: %d%n%s",
        transactionsFile, transactional.count(), transactional.summary());
    assertThat(sends.stream().filter(Send::acked).count()).as("acknowledged sends").isPositive();
    assertThat(result.count()).as("anomalies:%n%s", result.summary()).isZero();
    assertThat(transactional.outcomes().getOrDefault(Outcome.COMMITTED, 0))
        .as("committed transactions")
        .isPositive();
    assertThat(transactionsEnded[0])
        .as("every transaction ended: a read_committed read from the start reached the end")
        .isTrue();
    assertThat(transactional.count())
        .as("transactional anomalies:%n%s", transactional.summary())
        .isZero();
  }

  /**
   * Runs both workloads under the faults, then reads what they wrote; whether the transactional
   * workload's final read reached the end of every partition.
   */
  private static boolean run(
      Path dir,
      FaultSecurity security,
      Random random,
      long minutes,
      History history,
      History transactions,
      List<String> log)
      throws Exception {
    try (FaultCluster cluster = FaultCluster.start(dir, BROKERS, 128, BROKER_CONFIG, security);
        Workload workload = new Workload(clients(cluster, security), history, PARTITIONS);
        TransactionalWorkload transactional =
            new TransactionalWorkload(
                clients(cluster, security), transactions, TRANSACTION_PARTITIONS)) {
      workload.createTopic();
      transactional.createTopic();
      workload.awaitInSync();
      Duration limit = Duration.ofMinutes(minutes + 20);
      workload.start(PRODUCERS, RATE_PER_PRODUCER, ASSIGN_READERS, GROUP_READERS, limit);
      transactional.start(TRANSACTORS, random.nextLong(), limit);
      Thread.sleep(5_000);
      Nemesis nemesis = new Nemesis(cluster, history, random, workload);
      // CI: every kind once, then a second round, in the seed's order, while 3 minutes last.
      long budget = minutes == 0 ? CI_FAULT_SECONDS : TimeUnit.MINUTES.toSeconds(minutes);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(budget);
      List<Nemesis.Kind> schedule = schedule(random);
      for (int i = 0; i < 10_000; i++) {
        boolean inTime = System.nanoTime() < deadline;
        if (minutes == 0 ? i >= schedule.size() || i >= kinds().size() && !inTime : !inTime) {
          break;
        }
        Nemesis.Kind kind =
            minutes == 0 ? schedule.get(i) : kinds().get(random.nextInt(kinds().size()));
        // From well below the broker session (6 s) and the replica lag time (10 s) to well above.
        Duration hold = Duration.ofMillis(3_000 + random.nextInt(11_000));
        String target = nemesis.inject(kind, hold);
        Duration recovery = workload.awaitInSync();
        log.add(
            String.format(
                "%-22s %-24s held %4.1f s, in sync %4.1f s after",
                kind, target, hold.toMillis() / 1e3, recovery.toMillis() / 1e3));
        Thread.sleep(1_000);
      }
      workload.stopProducers();
      transactional.stop();
      workload.awaitInSync();
      workload.drain(Duration.ofSeconds(60), ASSIGN_READERS);
      workload.finalRead(Duration.ofSeconds(60));
      // the transactions' timeout (10 s) included: one a producer left open is aborted by then
      boolean ended = transactional.finalRead(Duration.ofSeconds(90));
      transactional.readCommittedOffsets();
      return ended;
    }
  }

  private static WorkloadClients clients(FaultCluster cluster, FaultSecurity security) {
    return new WorkloadClients(
        cluster.bootstrap(), security == null ? Map.of() : security.clientConfig());
  }

  /** The kinds {@code -Dtidelog.faults.kinds=A,B} names, or all. */
  private static List<Nemesis.Kind> kinds() {
    String names = System.getProperty("tidelog.faults.kinds", "");
    return names.isBlank()
        ? Arrays.asList(Nemesis.Kind.values())
        : Arrays.stream(names.split(",")).map(String::strip).map(Nemesis.Kind::valueOf).toList();
  }

  private static List<Nemesis.Kind> schedule(Random random) {
    List<Nemesis.Kind> kinds = new ArrayList<>();
    for (int round = 0; round < 2; round++) {
      List<Nemesis.Kind> once = new ArrayList<>(kinds());
      Collections.shuffle(once, random);
      kinds.addAll(once);
    }
    return kinds;
  }
}
