package io.tidelog.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * Plays Kubernetes' StatefulSet controller and kubelet for a Cluster's broker pods in the mock API,
 * over the real brokers of a {@link DevCluster}: pod {@code i} is broker {@code i}. It makes each
 * missing pod from the StatefulSet's current template, Ready, starting its broker first if it does
 * not run (a scale-up). When a pod that it made disappears (the operator deleted it), it stops that
 * broker with SIGTERM, as the kubelet would, starts it again, and then makes the pod anew; when the
 * StatefulSet scales down, it stops the brokers beyond it and deletes their pods; while a broker is
 * stopped it runs what {@link #whileStopped} was given, such as traffic that the broker will have
 * to catch up on. It records the order of those restarts and removals and the most of its pods
 * missing at once.
 */
final class BrokerPods implements AutoCloseable {
  private static final long RUN_MAX_MS = TimeUnit.MINUTES.toMillis(10);

  private final KubernetesClient client;
  private final String namespace;
  private final String statefulSet;
  private final DevCluster cluster;
  private final Thread thread;
  private final List<Integer> restarts = new ArrayList<>();
  private final List<Integer> removed = new ArrayList<>();
  private final Set<Integer> made = new HashSet<>();
  private volatile IntConsumer whileStopped = id -> {};
  private volatile boolean closed;
  private volatile int mostMissing;
  private volatile Exception failure;

  BrokerPods(KubernetesClient client, String namespace, String statefulSet, DevCluster cluster) {
    this.client = client;
    this.namespace = namespace;
    this.statefulSet = statefulSet;
    this.cluster = cluster;
    this.thread = new Thread(this::run, "broker-pods");
    thread.setDaemon(true);
    thread.start();
  }

  synchronized List<Integer> restarts() {
    return List.copyOf(restarts);
  }

  int mostMissing() {
    return mostMissing;
  }

  /** Runs {@code action} with each broker's id while it is stopped, from now on. */
  void whileStopped(IntConsumer action) {
    whileStopped = action;
  }

  private void run() {
    long deadline = System.currentTimeMillis() + RUN_MAX_MS;
    try {
      while (!closed && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
        StatefulSet set =
            client.apps().statefulSets().inNamespace(namespace).withName(statefulSet).get();
        if (set == null) {
          continue;
        }
        int replicas = set.getSpec().getReplicas();
        removeBeyond(replicas);
        List<Integer> missing = new ArrayList<>();
        for (int id = 0; id < replicas; id++) {
          if (client.pods().inNamespace(namespace).withName(statefulSet + "-" + id).get() == null) {
            missing.add(id);
          }
        }
        int gone = (int) missing.stream().filter(made::contains).count();
        mostMissing = Math.max(mostMissing, gone);
        for (int id : missing) {
          if (made.contains(id)) {
            cluster.stop(id);
            whileStopped.accept(id);
            if (cluster.run("start", String.valueOf(id)).exitCode() != 0) {
              throw new IllegalStateException("broker " + id + " did not start again");
            }
            synchronized (this) {
              restarts.add(id);
            }
          }
          if (!made.contains(id) && !cluster.running(id)) {
            // a broker a scale-up adds: its pod's container starts it
            if (cluster.run("start", String.valueOf(id)).exitCode() != 0) {
              throw new IllegalStateException("broker " + id + " did not start");
            }
          }
          client
              .pods()
              .inNamespace(namespace)
              .resource(readyPod(set.getSpec().getTemplate(), statefulSet + "-" + id, namespace))
              .create();
          made.add(id);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      failure = e;
    }
  }

  /**
   * As the StatefulSet controller scales down: the pods of ordinal {@code replicas} and above go,
   * the highest first, each broker stopped with SIGTERM before its pod is deleted.
   */
  private void removeBeyond(int replicas) throws Exception {
    List<Integer> beyond =
        made.stream().filter(id -> id >= replicas).sorted(Comparator.reverseOrder()).toList();
    for (int id : beyond) {
      cluster.stop(id);
      client.pods().inNamespace(namespace).withName(statefulSet + "-" + id).delete();
      made.remove(id);
      synchronized (this) {
        removed.add(id);
      }
    }
  }

  /** The brokers removed by a scale-down, in the order they went. */
  synchronized List<Integer> removed() {
    return List.copyOf(removed);
  }

  /** A Running, Ready pod {@code name} of {@code template}, as the kubelet would report it. */
  static Pod readyPod(PodTemplateSpec template, String name, String namespace) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .withLabels(template.getMetadata().getLabels())
        .withAnnotations(template.getMetadata().getAnnotations())
        .endMetadata()
        .withSpec(template.getSpec())
        .withNewStatus()
        .withPhase("Running")
        .addNewCondition()
        .withType("Ready")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  /** Stops playing; throws what went wrong while it played. */
  @Override
  public void close() throws Exception {
    closed = true;
    thread.join(TimeUnit.MINUTES.toMillis(2));
    if (failure != null) {
      throw failure;
    }
  }
}
