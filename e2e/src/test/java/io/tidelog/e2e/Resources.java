package io.tidelog.e2e;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.Topic;
import java.net.HttpURLConnection;
import java.time.Duration;
import java.util.function.UnaryOperator;

/** Custom resources written the way users write them: YAML. */
public final class Resources {
  private static final Duration EDIT_WITHIN = Duration.ofSeconds(30);

  private Resources() {}

  /**
   * Changes a resource as {@code kubectl edit} does: reads it, changes it and patches it; when
   * another write came in between (the operator's status, say) and the API server answers 409
   * Conflict, reads it again and retries, for at most 30 s.
   */
  static <T extends HasMetadata> T edit(Resource<T> resource, UnaryOperator<T> change) {
    return await()
        .atMost(EDIT_WITHIN)
        .ignoreExceptionsMatching(
            e ->
                e instanceof KubernetesClientException k
                    && k.getCode() == HttpURLConnection.HTTP_CONFLICT)
        .until(() -> resource.edit(change), edited -> true);
  }

  /** A Cluster whose spec is {@code spec}, YAML lines without indentation. */
  public static Cluster cluster(String namespace, String name, String spec) {
    return Serialization.unmarshal(
        """
        apiVersion: tidelog.io/v1alpha1
        kind: Cluster
        metadata: {name: %s, namespace: %s, annotations: {}}
        spec:
        %s"""
            .formatted(name, namespace, spec.indent(2)),
        Cluster.class);
  }

  /** A User of Cluster {@code clusterName} in its namespace, with more {@code spec} lines. */
  static io.tidelog.operator.api.User user(
      String namespace, String name, String clusterName, String spec) {
    return Serialization.unmarshal(
        """
        apiVersion: tidelog.io/v1alpha1
        kind: User
        metadata: {name: %s, namespace: %s, annotations: {}}
        spec:
          clusterRef: {name: %s}
        %s"""
            .formatted(name, namespace, clusterName, spec.indent(2)),
        io.tidelog.operator.api.User.class);
  }

  /** A Topic of Cluster {@code clusterNamespace/clusterName} with more {@code spec} lines. */
  static Topic topic(
      String namespace, String name, String spec, String clusterNamespace, String clusterName) {
    return Serialization.unmarshal(
        """
        apiVersion: tidelog.io/v1alpha1
        kind: Topic
        metadata: {name: %s, namespace: %s, annotations: {}}
        spec:
          clusterRef: {name: %s, namespace: %s}
        %s"""
            .formatted(name, namespace, clusterName, clusterNamespace, spec.indent(2)),
        Topic.class);
  }
}
