package io.tidelog.e2e;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The rule groups of the chart's PrometheusRule, as Prometheus reads them. */
final class PrometheusRules {
  private PrometheusRules() {}

  static List<Map<String, Object>> groups(List<HasMetadata> objects) {
    GenericKubernetesResource rule =
        HelmChart.generic(objects, "PrometheusRule")
            .orElseThrow(() -> new AssertionError("no PrometheusRule rendered"));
    return rule.get("spec", "groups");
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> rules(Map<String, Object> group) {
    return (List<Map<String, Object>>) group.get("rules");
  }

  static List<String> expressions(List<HasMetadata> objects) {
    return groups(objects).stream()
        .flatMap(g -> rules(g).stream())
        .map(r -> String.valueOf(r.get("expr")))
        .toList();
  }

  static Set<String> alertNames(List<HasMetadata> objects) {
    Set<String> names = new TreeSet<>();
    groups(objects).forEach(g -> rules(g).forEach(r -> names.add(String.valueOf(r.get("alert")))));
    return names;
  }

  /** Writes the groups as a Prometheus rule file, for promtool. */
  static Path writeRuleFile(List<HasMetadata> objects, Path file) throws IOException {
    Files.writeString(
        file, new KubernetesSerialization().asYaml(Map.of("groups", groups(objects))));
    return file;
  }
}
