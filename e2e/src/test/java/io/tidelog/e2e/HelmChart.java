package io.tidelog.e2e;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The chart in {@code charts/tidelog-operator}, rendered by the real Helm engine (helm-java) and
 * parsed with fabric8: Kubernetes kinds into their model classes, the Prometheus Operator's into
 * {@link GenericKubernetesResource}.
 */
final class HelmChart {
  static final Path DIR = DevCluster.REPO.resolve("charts/tidelog-operator");
  static final String RELEASE = "tidelog";
  static final String NAMESPACE = "tidelog-system";

  /** Helm's default (1.20) is below the chart's kubeVersion; render for a current release. */
  static final String KUBE_VERSION = "v1.31.0";

  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private HelmChart() {}

  /** The rendered YAML, with {@code values} set as {@code --set key=value} would. */
  static String template(Map<String, Object> values) {
    TemplateCommand template =
        new Helm(DIR)
            .template()
            .withName(RELEASE)
            .withNamespace(NAMESPACE)
            .withKubeVersion(KUBE_VERSION);
    values.forEach(template::set);
    return template.call();
  }

  /** The rendered objects. */
  static List<HasMetadata> render(Map<String, Object> values) {
    return parse(template(values));
  }

  /** The objects of a multi-document YAML stream. */
  static List<HasMetadata> parse(String yaml) {
    List<HasMetadata> objects = new ArrayList<>();
    for (String document : yaml.split("(?m)^---\\s*$")) {
      if (document.lines().allMatch(l -> l.isBlank() || l.strip().startsWith("#"))) {
        continue;
      }
      Object parsed =
          SERIALIZATION.unmarshal(
              new ByteArrayInputStream(document.getBytes(StandardCharsets.UTF_8)));
      objects.add((HasMetadata) parsed);
    }
    return objects;
  }

  static <T extends HasMetadata> List<T> all(List<HasMetadata> objects, Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).toList();
  }

  static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type) {
    List<T> found = all(objects, type);
    if (found.size() != 1) {
      throw new AssertionError(found.size() + " objects of " + type.getSimpleName());
    }
    return found.get(0);
  }

  /** The object of a kind fabric8 has no class for (a Prometheus Operator resource). */
  static Optional<GenericKubernetesResource> generic(List<HasMetadata> objects, String kind) {
    return all(objects, GenericKubernetesResource.class).stream()
        .filter(o -> kind.equals(o.getKind()))
        .findFirst();
  }
}
