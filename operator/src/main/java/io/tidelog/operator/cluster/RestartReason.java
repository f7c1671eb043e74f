package io.tidelog.operator.cluster;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Why a broker pod is out of date, each cause named (as Strimzi's {@code RestartReason} names them)
 * in the restart's Event and the {@code Reconciling} condition, so that a config change, an image
 * change and a manual roll do not look the same.
 */
enum RestartReason {
  CONFIG_CHANGE("ConfigChange", "server.properties changed"),
  MANUAL_ROLLING_UPDATE(
      "ManualRollingUpdate", ClusterModel.MANUAL_ROLL_ANNOTATION + " asked for a roll"),
  IMAGE_CHANGE("ImageChange", "the broker image changed"),
  POD_TEMPLATE_CHANGE(
      "PodTemplateChange",
      "the pod template changed (resources, JVM options, environment, volumes or scheduling)");

  private final String name;
  private final String description;

  RestartReason(String name, String description) {
    this.name = name;
    this.description = description;
  }

  /**
   * The causes by which {@code pod}, made from an earlier template, differs from {@code desired}:
   * those it can name, else {@link #POD_TEMPLATE_CHANGE}.
   */
  static List<RestartReason> of(Pod pod, PodTemplateSpec desired) {
    List<RestartReason> reasons = new ArrayList<>();
    if (!Objects.equals(
        annotation(pod.getMetadata().getAnnotations(), ClusterModel.CONFIG_HASH_ANNOTATION),
        annotation(desired.getMetadata().getAnnotations(), ClusterModel.CONFIG_HASH_ANNOTATION))) {
      reasons.add(CONFIG_CHANGE);
    }
    if (!Objects.equals(
        annotation(pod.getMetadata().getAnnotations(), ClusterModel.MANUAL_ROLL_ANNOTATION),
        annotation(desired.getMetadata().getAnnotations(), ClusterModel.MANUAL_ROLL_ANNOTATION))) {
      reasons.add(MANUAL_ROLLING_UPDATE);
    }
    if (!Objects.equals(image(pod.getSpec()), image(desired.getSpec()))) {
      reasons.add(IMAGE_CHANGE);
    }
    if (reasons.isEmpty()) {
      reasons.add(POD_TEMPLATE_CHANGE);
    }
    return reasons;
  }

  /** {@code reasons} as a condition or an Event says them: {@code Name (what changed), ...}. */
  static String describe(List<RestartReason> reasons) {
    return reasons.stream()
        .map(r -> r.name + " (" + r.description + ")")
        .collect(Collectors.joining(", "));
  }

  private static String annotation(Map<String, String> annotations, String key) {
    return annotations == null ? null : annotations.get(key);
  }

  private static String image(PodSpec spec) {
    List<Container> containers = spec == null ? null : spec.getContainers();
    return containers == null || containers.isEmpty() ? null : containers.get(0).getImage();
  }
}
