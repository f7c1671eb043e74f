package io.tidelog.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The name extraction that MonitoringIT's cross-check relies on. */
class PromQlTest {

  @Test
  void findsTheMetricsAndNothingElse() {
    assertThat(
            PromQl.metricNames(
                "histogram_quantile(0.99, sum by (le, api) (rate(a_bucket{ns=\"$namespace\","
                    + " x=~\"b|c\"}[$__rate_interval]))) / on(pod) group_left(node) b_total"
                    + " > 1e3 and c unless count without (topic) (d offset 5m) or vector(0)"))
        .containsExactly("a_bucket", "b_total", "c", "d");
  }

  @Test
  void readsGrafanaLabelValuesQueries() {
    assertThat(PromQl.metricNames("label_values(up{job=\"x\"}, namespace)")).containsExactly("up");
    assertThat(PromQl.metricNames("label_values(namespace)")).isEmpty();
  }
}
