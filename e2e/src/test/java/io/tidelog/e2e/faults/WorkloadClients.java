package io.tidelog.e2e.faults;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * How the fault suite's workloads reach the cluster: the configs each of their clients starts from,
 * with timeouts short enough that a fault fails a call rather than holding it, and the topics they
 * write, replicated as a platform team would.
 */
final class WorkloadClients {
  private final String bootstrap;
  private final Map<String, Object> security;

  /**
   * @param security client configs every client gets (the secure round's SASL_SSL), or none
   */
  WorkloadClients(String bootstrap, Map<String, Object> security) {
    this.bootstrap = bootstrap;
    this.security = security;
  }

  Admin admin() {
    Properties config = new Properties();
    config.putAll(security);
    config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
    config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
    return Admin.create(config);
  }

  /** An idempotent producer's config, {@code acks=all}, with bounded retries. */
  Properties producer() {
    Properties config = new Properties();
    config.putAll(security);
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000);
    config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 3_000);
    config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
    config.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1_000);
    return config;
  }

  /** A consumer's config: no automatic commits, from the earliest offset. */
  Properties consumer() {
    Properties config = new Properties();
    config.putAll(security);
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    config.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
    config.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
    config.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1_000);
    return config;
  }

  /** Creates a topic of three replicas with {@code min.insync.replicas=2}. */
  static void createTopic(Admin admin, String topic, int partitions) throws Exception {
    admin
        .createTopics(
            List.of(
                new NewTopic(topic, partitions, (short) 3)
                    .configs(Map.of("min.insync.replicas", "2"))))
        .all()
        .get(30, TimeUnit.SECONDS);
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
