package io.tidelog.operator.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A user of a {@link Cluster}: a SCRAM credential, and the user's ACLs and quotas, kept as
 * declared. The Kafka user is the resource's name.
 */
@Group(Cluster.GROUP)
@Version(Cluster.VERSION)
@ShortNames("tlu")
@Categories("tidelog")
@AdditionalPrinterColumn(
    name = "Cluster",
    jsonPath = ".spec.clusterRef.name",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Authentication",
    jsonPath = ".spec.authentication.type",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Secret",
    jsonPath = ".status.secret",
    type = AdditionalPrinterColumn.Type.STRING)
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
public class User extends CustomResource<UserSpec, UserStatus> implements Namespaced {
  /** Set to {@code true} to take over a Kafka user that has a credential or ACLs already. */
  public static final String ADOPT_ANNOTATION = "tidelog.io/adopt";
}
