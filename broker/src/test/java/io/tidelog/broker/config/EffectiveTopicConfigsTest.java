package io.tidelog.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A topic's effective configs are parsed once per revision and per change of the defaults. */
class EffectiveTopicConfigsTest {
  @Test
  void aTopicsSettingsAreParsedOncePerRevisionAndAgainWhenTheDefaultsChange() {
    AtomicReference<Map<String, String>> defaults =
        new AtomicReference<>(Map.of("min.insync.replicas", "2"));
    EffectiveTopicConfigs configs = new EffectiveTopicConfigs(defaults::get);
    Map<String, String> overrides = Map.of("retention.ms", "1000");

    EffectiveTopicConfigs.Effective first = configs.of("t", 5, overrides);
    assertThat(first.minInsyncReplicas()).isEqualTo(2);
    assertThat(first.log().retentionMs()).isEqualTo(1000);
    assertThat(configs.of("t", 5, overrides))
        .as("the same revision: not parsed again")
        .isSameAs(first);

    EffectiveTopicConfigs.Effective next = configs.of("t", 6, Map.of("min.insync.replicas", "3"));
    assertThat(next.minInsyncReplicas()).isEqualTo(3);

    defaults.set(Map.of("min.insync.replicas", "1", "unclean.leader.election.enable", "true"));
    EffectiveTopicConfigs.Effective newDefaults = configs.of("t", 6, Map.of());
    assertThat(newDefaults.uncleanLeaderElection()).isTrue();
    assertThat(newDefaults.minInsyncReplicas()).isEqualTo(1);
  }

  @Test
  void aDeletedTopicIsForgotten() {
    EffectiveTopicConfigs configs = new EffectiveTopicConfigs(Map::of);
    configs.of("kept", 1, Map.of());
    configs.of("gone", 1, Map.of());
    configs.retain(List.of("gone", "kept"), Set.of("kept"));
    assertThat(configs.topics()).containsExactly("kept");
  }
}
