package io.tidelog.operator.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.config.MeterFilterReply;
import java.util.Comparator;
import java.util.Map;
import java.util.Set;

/**
 * Keeps the operator's scrape within Prometheus' conventions, as {@code promtool check metrics}
 * checks them: java-operator-sdk registers its meters without descriptions, so this gives each a
 * help text; and two of Micrometer's processor meters break the naming rules ({@code
 * process_cpu_time_ns_total}, an abbreviated unit; {@code system_cpu_count}, a gauge named like a
 * histogram's count), so they are left out.
 */
public final class OperatorMeterFilter implements MeterFilter {
  private static final Set<String> DENIED = Set.of("process.cpu.time", "system.cpu.count");
  private static final String JOSDK_PREFIX = "operator.sdk.";

  /**
   * Help texts of java-operator-sdk's meters by name, or by name prefix for per-controller ones.
   */
  private static final Map<String, String> JOSDK_HELP =
      Map.of(
          "operator.sdk.reconciliations.started", "Reconciliations started, per resource kind",
          "operator.sdk.reconciliations.success", "Reconciliations that succeeded, per kind",
          "operator.sdk.reconciliations.failed",
              "Reconciliations that threw, per kind; they are retried with back-off",
          "operator.sdk.reconciliations.executions.", "Reconciliations running now",
          "operator.sdk.reconciliations.queue.size.", "Resources waiting to be reconciled",
          "operator.sdk.events.received", "Events the controllers received from their informers",
          "operator.sdk.controllers.execution.reconcile", "Reconcile calls, per controller",
          "operator.sdk.controllers.execution.reconcile.success",
              "Reconcile calls that returned, per controller",
          "operator.sdk.controllers.execution.reconcile.failure",
              "Reconcile calls that threw, per controller");

  @Override
  public MeterFilterReply accept(Meter.Id id) {
    return DENIED.contains(id.getName()) ? MeterFilterReply.DENY : MeterFilterReply.NEUTRAL;
  }

  @Override
  public Meter.Id map(Meter.Id id) {
    if (id.getDescription() != null || !id.getName().startsWith(JOSDK_PREFIX)) {
      return id;
    }
    String help =
        JOSDK_HELP.entrySet().stream()
            .filter(e -> id.getName().startsWith(e.getKey()))
            .max(Comparator.comparingInt(e -> e.getKey().length()))
            .map(Map.Entry::getValue)
            .orElse("java-operator-sdk's " + id.getName());
    return new Meter.Id(id.getName(), Tags.of(id.getTags()), id.getBaseUnit(), help, id.getType());
  }
}
