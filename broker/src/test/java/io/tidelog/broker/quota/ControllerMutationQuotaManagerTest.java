package io.tidelog.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.errors.ThrottlingQuotaExceededException;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

/**
 * The {@code controller_mutation_rate} token bucket of a client: strict requests are refused while
 * it is in debt, permissive ones never, and both carry the time until the debt is paid.
 */
class ControllerMutationQuotaManagerTest {
  private final MockTime time = new MockTime(0, 1_000_000, 0);
  private final Counter[] counters = ClientQuotaManager.counters(new PrometheusRegistry());
  private final ControllerMutationQuotaManager quotas =
      new ControllerMutationQuotaManager(
          new Metrics(new MetricConfig(), List.of(), time, false), time, counters[0], counters[1]);

  ControllerMutationQuotaManagerTest() {
    quotas.update(
        Map.of(
            new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "app")),
            Map.of(ControllerMutationQuotaManager.QUOTA_KEY, 10.0)));
  }

  @Test
  void aStrictRequestIsRefusedOnlyOnceTheBucketIsInDebt() {
    ControllerMutationQuotaManager.RequestQuota quota = quotas.forRequest("alice", "app", true);
    quota.record(90); // 110 tokens (11 s at 10/s) -> 20
    quota.record(90); // found not in debt, so taken: -> -70
    assertThat(quota.throttleTimeMs()).isZero();

    assertThatThrownBy(() -> quota.record(1))
        .isInstanceOfSatisfying(
            ThrottlingQuotaExceededException.class,
            e -> assertThat(e.throttleTimeMs()).isEqualTo(7_000));
    assertThat(quota.throttleTimeMs()).isEqualTo(7_000);
    time.sleep(2_000);
    assertThat(quota.throttleTimeMs()).isEqualTo(5_000);
    assertThat(counters[0].labelValues(ControllerMutationQuotaManager.QUOTA_KEY).get())
        .isEqualTo(2);

    time.sleep(5_001); // the debt is paid
    quotas.forRequest("alice", "app", true).record(1);
  }

  @Test
  void aPermissiveRequestIsNeverRefusedButThrottled() {
    ControllerMutationQuotaManager.RequestQuota quota = quotas.forRequest("alice", "app", false);
    quota.record(100);
    quota.record(100);
    quota.record(100);

    assertThat(quota.throttleTimeMs()).isEqualTo(19_000);
  }

  @Test
  void aClientWithoutTheQuotaIsNeverThrottled() {
    ControllerMutationQuotaManager.RequestQuota quota = quotas.forRequest("alice", "other", true);
    for (int i = 0; i < 100; i++) {
      quota.record(1_000);
    }
    assertThat(quota.throttleTimeMs()).isZero();
  }
}
