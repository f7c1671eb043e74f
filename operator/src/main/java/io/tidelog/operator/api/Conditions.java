package io.tidelog.operator.api;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;

/**
 * Kubernetes status conditions, kept the way {@code kubectl wait} and GitOps tools expect: one per
 * type, and {@code lastTransitionTime} moves only when the status flips.
 */
public final class Conditions {
  public static final String READY = "Ready";
  public static final String RECONCILING = "Reconciling";
  public static final String ERROR = "Error";
  public static final String PAUSED = "ReconciliationPaused";

  private Conditions() {}

  /** Sets the condition {@code type}, replacing any earlier one of that type. */
  public static void set(
      List<Condition> conditions,
      String type,
      boolean status,
      String reason,
      String message,
      Long generation) {
    String statusText = status ? "True" : "False";
    String since =
        find(conditions, type)
            .filter(c -> statusText.equals(c.getStatus()))
            .map(Condition::getLastTransitionTime)
            .orElseGet(() -> Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    conditions.removeIf(c -> type.equals(c.getType()));
    conditions.add(
        new ConditionBuilder()
            .withType(type)
            .withStatus(statusText)
            .withReason(reason)
            .withMessage(message)
            .withObservedGeneration(generation)
            .withLastTransitionTime(since)
            .build());
  }

  /** Removes the condition {@code type}. */
  public static void remove(List<Condition> conditions, String type) {
    conditions.removeIf(c -> type.equals(c.getType()));
  }

  public static Optional<Condition> find(List<Condition> conditions, String type) {
    return conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  public static boolean isTrue(List<Condition> conditions, String type) {
    return find(conditions, type).map(c -> "True".equals(c.getStatus())).orElse(false);
  }
}
