package io.tidelog.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;

/**
 * What the brokers said of themselves while a test ran: every {@value #INTERVAL_MS} ms, through
 * kafka-clients' Admin, the live brokers (DescribeCluster) and the ISR of each partition of some
 * topics (DescribeTopics), each {@link Sample} stamped with the time its requests were sent. A
 * round that fails (a broker restarting under the Admin) is left out.
 */
final class BrokerTimeline implements AutoCloseable {
  private static final long INTERVAL_MS = 200;
  private static final long RUN_MAX_MS = TimeUnit.MINUTES.toMillis(10);

  /** One round: when it was sent ({@link System#nanoTime}), who was live, each partition's ISR. */
  record Sample(long sentNanos, Set<Integer> live, Map<String, Set<Integer>> isrs) {
    /** Whether {@code broker} was live and out of some ISR: registered, and behind. */
    boolean lagging(int broker) {
      return live.contains(broker) && isrs.values().stream().anyMatch(isr -> !isr.contains(broker));
    }
  }

  private final Admin admin;
  private final List<String> topics;
  private final List<Sample> samples = new CopyOnWriteArrayList<>();
  private final Thread thread;
  private volatile boolean closed;

  BrokerTimeline(String bootstrap, List<String> topics) {
    this.admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2_000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000));
    this.topics = List.copyOf(topics);
    this.thread = new Thread(this::run, "broker-timeline");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    long deadline = System.currentTimeMillis() + RUN_MAX_MS;
    while (!closed && System.currentTimeMillis() < deadline) {
      long sent = System.nanoTime();
      try {
        Set<Integer> live =
            admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).stream()
                .map(Node::id)
                .collect(Collectors.toCollection(TreeSet::new));
        Map<String, Set<Integer>> isrs = new TreeMap<>();
        for (TopicDescription topic :
            admin.describeTopics(topics).allTopicNames().get(5, TimeUnit.SECONDS).values()) {
          topic
              .partitions()
              .forEach(
                  p ->
                      isrs.put(
                          topic.name() + "-" + p.partition(),
                          p.isr().stream()
                              .map(Node::id)
                              .collect(Collectors.toCollection(TreeSet::new))));
        }
        samples.add(new Sample(sent, live, isrs));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        // a broker restarting under the Admin: the next round asks again
      }
      try {
        Thread.sleep(INTERVAL_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  List<Sample> samples() {
    return List.copyOf(samples);
  }

  /** The brokers in the order they left the live set, once per departure. */
  List<Integer> departures() {
    List<Integer> departed = new ArrayList<>();
    Set<Integer> before = null;
    for (Sample sample : samples) {
      if (before != null) {
        for (int broker : before) {
          if (!sample.live().contains(broker)) {
            departed.add(broker);
          }
        }
      }
      before = sample.live();
    }
    return departed;
  }

  @Override
  public void close() throws InterruptedException {
    closed = true;
    thread.join(TimeUnit.SECONDS.toMillis(30));
    admin.close(Duration.ofSeconds(5));
  }
}
