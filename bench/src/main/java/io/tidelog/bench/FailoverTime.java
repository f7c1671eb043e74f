package io.tidelog.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Failover time of a cluster of three brokers, Tidelog's or Apache Kafka's: from {@code kill -9}
 * (or SIGSTOP) of a partition's leader to the first {@code acks=all} produce that succeeds on the
 * new leader, with a connected idempotent producer (kafka-clients' defaults otherwise; for a pause
 * a {@code request.timeout.ms} of {@value #PAUSE_REQUEST_TIMEOUT_MS} ms, so that the session, not
 * the client's 30 s, bounds the stall). Each run stops the leader of the moment, measures, starts
 * (or resumes) the broker again and waits until it is back in the ISR.
 *
 * <p>Usage: {@code FailoverTime <control> <bootstrap> <runs> [kill|pause]}, where {@code <control>
 * kill|start|pause|resume <id>} acts on broker {@code id}; prints every run, then the median,
 * minimum and maximum.
 */
public final class FailoverTime {
  private static final String TOPIC = "failover";
  private static final long STEP_TIMEOUT_MS = 120_000;
  private static final int PAUSE_REQUEST_TIMEOUT_MS = 3_000;

  private FailoverTime() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3
        || args.length > 4
        || (args.length == 4 && !args[3].matches("kill|pause"))) {
      System.err.println("usage: FailoverTime <control> <bootstrap> <runs> [kill|pause]");
      System.exit(2);
    }
    ClusterControl control = new ClusterControl(args[0], STEP_TIMEOUT_MS);
    String bootstrap = args[1];
    int runs = Integer.parseInt(args[2]);
    boolean pause = args.length == 4 && args[3].equals("pause");
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                2000))) {
      if (!admin.listTopics().names().get().contains(TOPIC)) { // an earlier mode made it
        admin
            .createTopics(
                List.of(
                    new NewTopic(TOPIC, 1, (short) 3).configs(Map.of("min.insync.replicas", "2"))))
            .all()
            .get();
      }
      awaitFullIsr(admin);
      List<Long> millis = new ArrayList<>();
      for (int run = 1; run <= runs; run++) {
        int leader = partition(admin).leader().id();
        try (KafkaProducer<String, String> producer = producer(bootstrap, pause)) {
          producer.send(new ProducerRecord<>(TOPIC, "before " + run)).get();
          long start = System.nanoTime();
          if (pause) {
            control.pause(leader);
          } else {
            control.kill(leader);
          }
          producer
              .send(new ProducerRecord<>(TOPIC, "after " + run))
              .get(STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
          long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
          millis.add(elapsed);
          System.out.printf(
              "run %d: %s leader %d; first acks=all success after %d ms%n",
              run, pause ? "paused" : "killed", leader, elapsed);
        }
        if (pause) {
          control.resume(leader);
        } else {
          control.start(leader);
        }
        awaitFullIsr(admin);
      }
      Collections.sort(millis);
      System.out.printf(
          "failover (%s) over %d runs: median %d ms, min %d ms, max %d ms%n",
          pause ? "pause" : "kill",
          runs,
          median(millis),
          millis.get(0),
          millis.get(millis.size() - 1));
    }
  }

  private static long median(List<Long> sorted) {
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static KafkaProducer<String, String> producer(String bootstrap, boolean pause) {
    Map<String, Object> config = new java.util.HashMap<>();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) STEP_TIMEOUT_MS);
    if (pause) {
      config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, PAUSE_REQUEST_TIMEOUT_MS);
    }
    return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
  }

  private static TopicPartitionInfo partition(Admin admin) throws Exception {
    return admin
        .describeTopics(List.of(TOPIC))
        .allTopicNames()
        .get()
        .get(TOPIC)
        .partitions()
        .get(0);
  }

  private static void awaitFullIsr(Admin admin) throws Exception {
    long deadline = System.currentTimeMillis() + STEP_TIMEOUT_MS;
    while (true) {
      try {
        if (partition(admin).isr().size() == 3) {
          return;
        }
      } catch (Exception e) {
        // a broker is still starting; ask again
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the ISR did not get back to 3 replicas in time");
      }
      Thread.sleep(200);
    }
  }
}
