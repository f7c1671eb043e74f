package io.tidelog.e2e;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.Topic;

/** Custom resources written the way users write them: YAML. */
final class Resources {
  private Resources() {}

  /** A Cluster whose spec is {@code spec}, YAML lines without indentation. */
  static Cluster cluster(String namespace, String name, String spec) {
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
