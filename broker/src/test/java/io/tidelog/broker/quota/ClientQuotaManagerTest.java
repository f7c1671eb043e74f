package io.tidelog.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

/** Kafka's precedence of quota entities, and the throttle of a client over its quota. */
class ClientQuotaManagerTest {
  private final MockTime time = new MockTime(0, 1_000_000, 0);
  private final io.prometheus.metrics.model.registry.PrometheusRegistry registry =
      new io.prometheus.metrics.model.registry.PrometheusRegistry();
  private final io.prometheus.metrics.core.metrics.Counter[] counters =
      ClientQuotaManager.counters(registry);
  private final ClientQuotaManager quotas =
      new ClientQuotaManager(
          "producer_byte_rate",
          ClientQuotaManager.BYTE_RATE_MAX_THROTTLE_MS,
          new Metrics(new MetricConfig(), List.of(), time, false),
          time,
          counters[0],
          counters[1]);

  private static ClientQuotaEntity entity(
      String user, String clientId, boolean withUser, boolean withClient) {
    Map<String, String> entries = new HashMap<>();
    if (withUser) {
      entries.put(ClientQuotaEntity.USER, user);
    }
    if (withClient) {
      entries.put(ClientQuotaEntity.CLIENT_ID, clientId);
    }
    return new ClientQuotaEntity(entries);
  }

  @Test
  void theMostSpecificEntityWinsInKafkasOrder() {
    Map<ClientQuotaEntity, Map<String, Double>> all = new HashMap<>();
    String[][] order = {
      {"alice", "app", "uc"}, {"alice", null, "uc"}, {"alice", null, "u"},
      {null, "app", "uc"}, {null, null, "uc"}, {null, null, "u"},
      {null, "app", "c"}, {null, null, "c"}
    };
    for (int i = 0; i < order.length; i++) {
      String[] e = order[i];
      all.put(
          entity(e[0], e[1], e[2].contains("u"), e[2].contains("c")),
          Map.of("producer_byte_rate", (double) (i + 1)));
    }
    // each level in turn is the most specific one left, once the ones above it are removed
    for (int i = 0; i < order.length; i++) {
      quotas.update(all);
      QuotaMatch applied = quotas.applied("alice", "app");
      assertThat(applied.bound()).as("level %d", i + 1).isEqualTo(i + 1);
      String[] e = order[i];
      all.remove(entity(e[0], e[1], e[2].contains("u"), e[2].contains("c")));
    }
    quotas.update(all);
    assertThat(quotas.applied("alice", "app")).isNull();
  }

  @Test
  void aDefaultQuotaKeepsARateForEachUserAndAClientOverItIsThrottled() {
    quotas.update(Map.of(entity(null, null, true, false), Map.of("producer_byte_rate", 1_000.0)));
    QuotaMatch alice = quotas.applied("alice", "app");
    assertThat(alice.user()).isEqualTo("alice");
    assertThat(alice.clientId()).isEmpty();
    assertThat(quotas.recordAndGetThrottleTimeMs("alice", "app", 5_000))
        .isZero(); // the rate is young
    time.sleep(1_000);
    // 12,000 bytes over the span a young rate counts (10 windows of 1 s) is 1.2 times the quota:
    // 0.2 of the span, 2 s, brings it back within it
    assertThat(quotas.recordAndGetThrottleTimeMs("alice", "app", 7_000)).isEqualTo(2_000);
    // far over it, the throttle is at most the whole measured span, 11 windows
    assertThat(quotas.recordAndGetThrottleTimeMs("alice", "app", 100_000)).isEqualTo(11_000);
    assertThat(counters[0].labelValues("producer_byte_rate").get()).isEqualTo(2);
    assertThat(counters[1].labelValues("producer_byte_rate").get()).isEqualTo(13.0);
    assertThat(quotas.recordAndGetThrottleTimeMs("bob", "app", 5_000))
        .as("bob has a rate of his own")
        .isZero();
  }

  @Test
  void aRequestQuotaThrottlesForAtMostOneWindowAndCountsWorkAlreadyAnswered() {
    ClientQuotaManager requests =
        new ClientQuotaManager(
            "request_percentage",
            ClientQuotaManager.REQUEST_MAX_THROTTLE_MS,
            new Metrics(new MetricConfig(), List.of(), time, false),
            time,
            counters[0],
            counters[1]);
    requests.update(Map.of(entity(null, "app", false, true), Map.of("request_percentage", 1.0)));
    // 1 % of a thread is 10 ms a second: 20 percent-seconds over the 10 s a young rate counts is
    // twice that, whose throttle (10 s) is cut to one window; work already answered counts too
    requests.recordNoThrottle("alice", "app", 15.0);
    time.sleep(1_000);
    assertThat(requests.recordAndGetThrottleTimeMs("alice", "app", 5.0)).isEqualTo(1_000);
    assertThat(requests.recordAndGetThrottleTimeMs("alice", "other", 50.0)).isZero();
  }
}
