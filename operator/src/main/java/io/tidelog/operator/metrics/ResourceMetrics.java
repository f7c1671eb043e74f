package io.tidelog.operator.metrics;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.reconciler.ResourceCache;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.tidelog.operator.api.Conditions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Gauges over the custom resources in the reconcilers' caches, read at scrape time: how many of
 * each kind there are per {@code Ready} status ({@code tidelog_operator_resources}), and how many
 * are stuck ({@code tidelog_operator_stuck_resources}): not Ready for longer than {@code
 * stuckAfter} (a paused Cluster excepted), or deleted that long ago and still there.
 */
public final class ResourceMetrics {
  private final MeterRegistry registry;
  private final Duration stuckAfter;
  private final Clock clock;

  public ResourceMetrics(MeterRegistry registry, Duration stuckAfter, Clock clock) {
    this.registry = registry;
    this.stuckAfter = stuckAfter;
    this.clock = clock;
  }

  /**
   * Counts the resources of {@code cache}, with {@code conditions} reading a resource's status
   * conditions (empty before its first status).
   */
  public <P extends HasMetadata> void watch(
      String kind, ResourceCache<P> cache, Function<P, List<Condition>> conditions) {
    for (String ready : List.of("true", "false", "unknown")) {
      Gauge.builder(
              "tidelog.operator.resources",
              () -> cache.list().filter(p -> ready(conditions.apply(p)).equals(ready)).count())
          .description("Custom resources per kind and per status of their Ready condition")
          .tag("kind", kind)
          .tag("ready", ready)
          .register(registry);
    }
    Predicate<P> stuck = p -> isStuck(p, conditions.apply(p), clock.instant());
    Gauge.builder("tidelog.operator.stuck.resources", () -> cache.list().filter(stuck).count())
        .description(
            "Custom resources not Ready, or deleted and not gone, for longer than the operator's"
                + " TIDELOG_OPERATOR_STUCK_AFTER_SECONDS")
        .tag("kind", kind)
        .register(registry);
  }

  private static String ready(List<Condition> conditions) {
    return Conditions.find(conditions, Conditions.READY)
        .map(c -> c.getStatus().toLowerCase(java.util.Locale.ROOT))
        .orElse("unknown");
  }

  private boolean isStuck(HasMetadata resource, List<Condition> conditions, Instant now) {
    Optional<Instant> deleted = time(resource.getMetadata().getDeletionTimestamp());
    if (deleted.isPresent()) {
      return deleted.get().plus(stuckAfter).isBefore(now);
    }
    if (Conditions.isTrue(conditions, Conditions.READY)
        || Conditions.isTrue(conditions, Conditions.PAUSED)) {
      return false;
    }
    Optional<Instant> notReadySince =
        Conditions.find(conditions, Conditions.READY)
            .flatMap(c -> time(c.getLastTransitionTime()))
            .or(() -> time(resource.getMetadata().getCreationTimestamp()));
    return notReadySince.map(since -> since.plus(stuckAfter).isBefore(now)).orElse(false);
  }

  private static Optional<Instant> time(String timestamp) {
    if (timestamp == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(Instant.parse(timestamp));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }
}
