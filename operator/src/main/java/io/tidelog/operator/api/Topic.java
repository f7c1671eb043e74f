package io.tidelog.operator.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** A topic of a {@link Cluster}, kept as declared: partitions and configs. */
@Group(Cluster.GROUP)
@Version(Cluster.VERSION)
@ShortNames("tlt")
@Categories("tidelog")
@AdditionalPrinterColumn(
    name = "Cluster",
    jsonPath = ".spec.clusterRef.name",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Topic",
    jsonPath = ".status.topicName",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Partitions",
    jsonPath = ".status.partitions",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Ready",
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
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
public class Topic extends CustomResource<TopicSpec, TopicStatus> implements Namespaced {
  /** Set to {@code retain} to keep the Kafka topic when the Topic is deleted. */
  public static final String DELETION_POLICY_ANNOTATION = "tidelog.io/deletion-policy";

  /** Set to {@code true} to take over a topic that exists already. */
  public static final String ADOPT_ANNOTATION = "tidelog.io/adopt";

  /** The Kafka topic's name: {@code spec.topicName}, else the resource's name. */
  public String topicName() {
    String name = getSpec() == null ? null : getSpec().topicName;
    return name != null ? name : getMetadata().getName();
  }
}
