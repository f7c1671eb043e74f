package io.tidelog.operator.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.List;

/** A Tidelog cluster: brokers in a StatefulSet, and the etcd that holds their metadata. */
@Group(Cluster.GROUP)
@Version(Cluster.VERSION)
@ShortNames("tlc")
@Categories("tidelog")
@AdditionalPrinterColumn(
    name = "Ready",
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Brokers",
    jsonPath = ".spec.replicas",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Ready Brokers",
    jsonPath = ".status.readyBrokers",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Bootstrap",
    jsonPath = ".status.bootstrapServers",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Reason",
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason",
    type = AdditionalPrinterColumn.Type.STRING,
    priority = 1)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class Cluster extends CustomResource<ClusterSpec, ClusterStatus> implements Namespaced {
  public static final String GROUP = "tidelog.io";
  public static final String VERSION = "v1alpha1";

  /**
   * Whether Topics and Users of {@code namespace} may bind to this Cluster: those of its own
   * namespace, and of those its {@code spec.topicNamespaces} lists ("*": every namespace).
   */
  public boolean accepts(String namespace) {
    List<String> allowed = getSpec().topicNamespaces;
    return namespace.equals(getMetadata().getNamespace())
        || allowed != null && (allowed.contains("*") || allowed.contains(namespace));
  }
}
