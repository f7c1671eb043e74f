package io.tidelog.operator.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.tidelog.operator.cluster.BrokerView.PartitionView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RollerTest {
  private static final String NEW = "new";
  private static final String OLD = "old";
  private static final PodTemplateSpec DESIRED = template(NEW, Map.of(), "tidelog:2");

  private static PodTemplateSpec template(
      String revision, Map<String, String> annotations, String image) {
    Map<String, String> all = new HashMap<>(annotations);
    all.put(ClusterModel.REVISION_ANNOTATION, revision);
    return new PodTemplateSpecBuilder()
        .withNewMetadata()
        .withAnnotations(all)
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("broker")
        .withImage(image)
        .endContainer()
        .endSpec()
        .build();
  }

  @Test
  void aRestartNamesEachCauseOfItsPodBeingOutOfDate() throws Exception {
    // Given pods made before a config change, a new image and a manual roll,
    PodTemplateSpec before =
        template(OLD, Map.of(ClusterModel.CONFIG_HASH_ANNOTATION, "a"), "tidelog:1");
    PodTemplateSpec after =
        template(
            NEW,
            Map.of(
                ClusterModel.CONFIG_HASH_ANNOTATION, "b", ClusterModel.MANUAL_ROLL_ANNOTATION, "1"),
            "tidelog:2");
    Map<Integer, Pod> pods = new HashMap<>();
    for (int id = 0; id < 3; id++) {
      pods.put(id, fromTemplate(before));
    }
    // then the restart says all three; a pod that differs otherwise says its template changed.
    String reason = ((Roller.Restart) Roller.next(3, after, pods, () -> healthy(0))).reason();
    assertThat(reason)
        .startsWith("out of date: ")
        .contains("ConfigChange", "ImageChange", "ManualRollingUpdate")
        .doesNotContain("PodTemplateChange");
    PodTemplateSpec onlyResources =
        template(NEW, Map.of(ClusterModel.CONFIG_HASH_ANNOTATION, "a"), "tidelog:1");
    assertThat(((Roller.Restart) Roller.next(3, onlyResources, pods, () -> healthy(0))).reason())
        .contains("PodTemplateChange")
        .doesNotContain("ConfigChange");
  }

  /** A Ready pod as the StatefulSet makes it from {@code template}. */
  private static Pod fromTemplate(PodTemplateSpec template) {
    return new PodBuilder()
        .withMetadata(template.getMetadata())
        .withSpec(template.getSpec())
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  @Test
  void nothingOutOfDateIsDone() throws Exception {
    // Given three Ready pods at the current revision, then the roll is done without asking brokers.
    assertThat(
            Roller.next(
                3,
                DESIRED,
                pods(NEW, NEW, NEW),
                () -> {
                  throw new AssertionError("not asked");
                }))
        .isEqualTo(new Roller.Done());
  }

  @Test
  void aMissingOrTerminatingPodMakesTheRollWait() throws Exception {
    // Given pod 1 missing, then nothing restarts.
    Map<Integer, Pod> pods = pods(OLD, OLD, OLD);
    pods.remove(1);
    assertThat(Roller.next(3, DESIRED, pods, () -> healthy(0))).isInstanceOf(Roller.Wait.class);
  }

  @Test
  void anOutOfDatePodThatIsNotReadyRestartsFirstUnchecked() throws Exception {
    // Given pod 2 out of date and not Ready, then it restarts first, without asking the brokers.
    Map<Integer, Pod> pods = pods(OLD, OLD, OLD);
    pods.put(2, pod(OLD, false));
    Roller.Decision decision =
        Roller.next(
            3,
            DESIRED,
            pods,
            () -> {
              throw new AssertionError("not asked");
            });
    assertThat(decision).isInstanceOf(Roller.Restart.class);
    assertThat(((Roller.Restart) decision).brokerId()).isEqualTo(2);
  }

  @Test
  void theControllerGoesLast() throws Exception {
    // Given all three out of date and broker 0 the controller, then broker 1 goes first, and with
    // only the controller left, it goes.
    assertThat(
            ((Roller.Restart) Roller.next(3, DESIRED, pods(OLD, OLD, OLD), () -> healthy(0)))
                .brokerId())
        .isEqualTo(1);
    assertThat(
            ((Roller.Restart) Roller.next(3, DESIRED, pods(OLD, NEW, NEW), () -> healthy(0)))
                .brokerId())
        .isEqualTo(0);
  }

  @Test
  void aLiveBrokerOutOfAnIsrMakesTheRollWait() throws Exception {
    // Given a partition whose ISR lacks live broker 2 (catching up), then nothing restarts.
    BrokerView lagging =
        view(0, Set.of(0, 1, 2), new PartitionView("t-0", List.of(0, 1, 2), Set.of(0, 1), 2));
    Roller.Decision decision = Roller.next(3, DESIRED, pods(OLD, OLD, OLD), () -> lagging);
    assertThat(decision).isInstanceOf(Roller.Wait.class);
    assertThat(((Roller.Wait) decision).why()).contains("catch up").contains("t-0");
  }

  @Test
  void aRestartThatWouldTakeAPartitionBelowMinIsrWaits() throws Exception {
    // Given broker 2 down, so that t-0 (RF 3, min ISR 2) has ISR {0, 1}, then restarting 0 or 1
    // would take it below its minimum: the roll waits and names the partition.
    BrokerView degraded =
        view(0, Set.of(0, 1), new PartitionView("t-0", List.of(0, 1, 2), Set.of(0, 1), 2));
    Roller.Decision decision = Roller.next(3, DESIRED, pods(OLD, OLD, NEW), () -> degraded);
    assertThat(decision).isInstanceOf(Roller.Wait.class);
    assertThat(((Roller.Wait) decision).why())
        .contains("below min.insync.replicas")
        .contains("t-0");
  }

  @Test
  void aPartitionWithNoMoreReplicasThanItsMinimumDoesNotBlock() throws Exception {
    // Given u-0 with RF 1 (min ISR 1) on broker 1, no restart can keep it writable, so it does not
    // block broker 1's restart.
    BrokerView view = view(0, Set.of(0, 1, 2), new PartitionView("u-0", List.of(1), Set.of(1), 1));
    assertThat(
            ((Roller.Restart) Roller.next(3, DESIRED, pods(NEW, OLD, NEW), () -> view)).brokerId())
        .isEqualTo(1);
  }

  private static BrokerView view(int controller, Set<Integer> live, PartitionView... partitions) {
    return new BrokerView(Optional.of(controller), live, List.of(partitions));
  }

  private static BrokerView healthy(int controller) {
    return view(
        controller,
        Set.of(0, 1, 2),
        new PartitionView("t-0", List.of(0, 1, 2), Set.of(0, 1, 2), 2));
  }

  private static Map<Integer, Pod> pods(String... revisions) {
    Map<Integer, Pod> pods = new HashMap<>();
    for (int id = 0; id < revisions.length; id++) {
      pods.put(id, pod(revisions[id], true));
    }
    return pods;
  }

  private static Pod pod(String revision, boolean ready) {
    return new PodBuilder()
        .withNewMetadata()
        .withAnnotations(Map.of(ClusterModel.REVISION_ANNOTATION, revision))
        .endMetadata()
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus(ready ? "True" : "False")
        .endCondition()
        .endStatus()
        .build();
  }
}
