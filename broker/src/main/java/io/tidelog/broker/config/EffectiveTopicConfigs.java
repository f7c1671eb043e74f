package io.tidelog.broker.config;

import io.tidelog.broker.log.LogConfig;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Each topic's effective settings, its overrides over the broker's defaults of them, merged and
 * parsed once per topic revision (and again when the defaults change), for every part of the broker
 * that needs them: the logs, replication's {@code min.insync.replicas}, the controller's {@code
 * unclean.leader.election.enable}. One entry a topic; deleted topics are {@linkplain #retain
 * forgotten}. Thread-safe.
 */
public final class EffectiveTopicConfigs {
  /** What a topic's configs make of it. */
  public record Effective(LogConfig log, int minInsyncReplicas, boolean uncleanLeaderElection) {}

  private record Cached(long revision, Map<String, String> defaults, Effective effective) {}

  private final Supplier<Map<String, String>> defaults;
  private final Map<String, Cached> byTopic = new ConcurrentHashMap<>();

  /** {@code defaults}: the broker's topic defaults now, the same map until they change. */
  public EffectiveTopicConfigs(Supplier<Map<String, String>> defaults) {
    this.defaults = defaults;
  }

  /** The broker's topic defaults now. */
  public Map<String, String> defaults() {
    return defaults.get();
  }

  /** The settings of {@code topic} at {@code revision}, whose overrides are {@code overrides}. */
  public Effective of(String topic, long revision, Map<String, String> overrides) {
    Map<String, String> now = defaults.get();
    Cached cached = byTopic.get(topic);
    if (cached != null && cached.revision() == revision && cached.defaults() == now) {
      return cached.effective();
    }
    Effective effective =
        new Effective(
            TopicConfigs.logConfig(now, overrides),
            TopicConfigs.minInsyncReplicas(now, overrides),
            TopicConfigs.uncleanLeaderElectionEnable(now, overrides));
    byTopic.put(topic, new Cached(revision, now, effective));
    return effective;
  }

  /** Forgets every topic of {@code changed} that is not in {@code existing} any more. */
  public void retain(Collection<String> changed, Set<String> existing) {
    for (String topic : changed) {
      if (!existing.contains(topic)) {
        byTopic.remove(topic);
      }
    }
  }

  /** The topics that have an entry. */
  public Set<String> topics() {
    return Set.copyOf(byTopic.keySet());
  }
}
