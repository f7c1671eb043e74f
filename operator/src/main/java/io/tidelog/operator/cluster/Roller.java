package io.tidelog.operator.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * Decides which broker pod to restart next, one at a time, as the Redpanda operator does with an
 * {@code OnDelete} StatefulSet. Pure: it reads pods and a {@link BrokerView}, and returns a
 * decision that the reconciler carries out.
 *
 * <ol>
 *   <li>While a pod is missing or terminating, wait: the previous restart is still under way.
 *   <li>An out-of-date pod that is not Ready serves nothing: restart it first, unchecked.
 *   <li>While any pod is not Ready, wait.
 *   <li>While a live broker is out of some ISR, wait: it is catching up, such as the broker
 *       restarted last.
 *   <li>Restart the lowest out-of-date ordinal whose restart leaves every partition at or above
 *       {@code min.insync.replicas}; the active controller goes last.
 * </ol>
 */
final class Roller {
  /** What to do now. */
  sealed interface Decision {}

  /** Nothing is out of date. */
  record Done() implements Decision {}

  /** Restart the pod of broker {@code brokerId}; {@code reason} names the causes. */
  record Restart(int brokerId, String reason) implements Decision {}

  /** Nothing may restart now; {@code why} goes into the status. */
  record Wait(String why) implements Decision {}

  private Roller() {}

  /**
   * @param desired the broker pod template as the StatefulSet has it now
   * @param pods the broker pods by broker id
   * @param view read only when the roll needs the brokers' answer
   */
  static Decision next(
      int replicas, PodTemplateSpec desired, Map<Integer, Pod> pods, Callable<BrokerView> view)
      throws Exception {
    String revision = desired.getMetadata().getAnnotations().get(ClusterModel.REVISION_ANNOTATION);
    for (int id = 0; id < replicas; id++) {
      Pod pod = pods.get(id);
      if (pod == null || pod.getMetadata().getDeletionTimestamp() != null) {
        return new Wait("waiting for the pod of broker " + id + " to start");
      }
    }
    List<Integer> outOfDate = new ArrayList<>();
    for (int id = 0; id < replicas; id++) {
      if (!revision.equals(revisionOf(pods.get(id)))) {
        outOfDate.add(id);
      }
    }
    if (outOfDate.isEmpty()) {
      return new Done();
    }
    for (int id : outOfDate) {
      if (!isReady(pods.get(id))) {
        return new Restart(id, "out of date and not Ready: " + causes(pods.get(id), desired));
      }
    }
    for (int id = 0; id < replicas; id++) {
      if (!isReady(pods.get(id))) {
        return new Wait("waiting for broker " + id + " to be Ready");
      }
    }
    BrokerView brokers = view.call();
    List<String> lagging = brokers.catchingUp();
    if (!lagging.isEmpty()) {
      return new Wait(
          "waiting for the replicas of %d under-replicated partitions to catch up, such as %s"
              .formatted(lagging.size(), lagging.get(0)));
    }
    Optional<Integer> controller = brokers.controllerId();
    List<Integer> order = new ArrayList<>(outOfDate);
    order.sort(Comparator.comparing((Integer id) -> controller.equals(Optional.of(id))));
    String blocked = "";
    for (int id : order) {
      List<String> below = brokers.wouldFallBelowMinIsr(id);
      if (below.isEmpty()) {
        return new Restart(
            id,
            "out of date: "
                + causes(pods.get(id), desired)
                + (controller.equals(Optional.of(id))
                    ? "; the active controller, so it goes last"
                    : ""));
      }
      blocked =
          "restarting broker %d would take %s below min.insync.replicas"
              .formatted(id, below.get(0));
    }
    return new Wait(blocked);
  }

  private static String causes(Pod pod, PodTemplateSpec desired) {
    return RestartReason.describe(RestartReason.of(pod, desired));
  }

  static String revisionOf(Pod pod) {
    var annotations = pod.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(ClusterModel.REVISION_ANNOTATION);
  }

  static boolean isReady(Pod pod) {
    return pod.getStatus() != null
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }
}
