package io.tidelog.operator.cluster;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterSpec;
import java.math.BigDecimal;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;

/**
 * The changes a Cluster's spec may not make, checked before anything is applied. Each problem is a
 * message that starts with the field path, for the Error condition.
 */
final class SpecChecks {
  /** A Kafka config name, which server.properties reads back as it is. */
  private static final Pattern CONFIG_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");

  private static final Pattern LISTENER_NAME = Pattern.compile("[a-z][a-z0-9]{0,10}");

  private SpecChecks() {}

  /**
   * @param brokers the broker StatefulSet as it is, or null
   * @param etcd the managed etcd StatefulSet as it is, or null
   * @param claims the brokers' data claims
   * @param view asked only when brokers would be removed: a scale-down that leaves fewer brokers
   *     than some topic's replication factor is refused; otherwise a {@link DrainPlan} empties the
   *     brokers first
   */
  static Optional<String> problem(
      Cluster cluster,
      StatefulSet brokers,
      StatefulSet etcd,
      List<PersistentVolumeClaim> claims,
      Callable<BrokerView> view)
      throws Exception {
    ClusterSpec spec = cluster.getSpec();
    if (spec.config != null) {
      Optional<String> config = configProblem(new TreeMap<>(spec.config));
      if (config.isPresent()) {
        return config;
      }
    }
    Optional<String> listeners = listenerProblem(spec);
    if (listeners.isPresent()) {
      return listeners;
    }
    for (var ca :
        List.of(
            Map.entry("clusterCa", Optional.ofNullable(spec.clusterCa)),
            Map.entry("clientsCa", Optional.ofNullable(spec.clientsCa)))) {
      if (ca.getValue().isPresent()
          && ca.getValue().get().renewalDays >= ca.getValue().get().validityDays) {
        return Optional.of(
            "spec.%s.renewalDays: must be fewer than validityDays (%d)"
                .formatted(ca.getKey(), ca.getValue().get().validityDays));
      }
    }
    BigDecimal wanted = Quantity.getAmountInBytes(new Quantity(spec.storage.size));
    for (PersistentVolumeClaim claim : claims) {
      Quantity size = claim.getSpec().getResources().getRequests().get("storage");
      if (size != null && Quantity.getAmountInBytes(size).compareTo(wanted) > 0) {
        return Optional.of(
            "spec.storage.size: cannot shrink volume %s from %s to %s; volumes can only grow"
                .formatted(claim.getMetadata().getName(), size, spec.storage.size));
      }
    }
    boolean managedEtcd = spec.etcd.endpoints == null;
    if (etcd != null && !managedEtcd) {
      return Optional.of(
          "spec.etcd.endpoints: cannot move the cluster's metadata from its managed etcd to another");
    }
    if (etcd != null && !etcd.getSpec().getReplicas().equals(spec.etcd.replicas)) {
      return Optional.of(
          "spec.etcd.replicas: cannot change a managed etcd's members from %d to %d"
              .formatted(etcd.getSpec().getReplicas(), spec.etcd.replicas));
    }
    if (brokers != null && brokers.getSpec().getReplicas() > spec.replicas) {
      Optional<BrokerView.PartitionView> widest =
          view.call().partitions().stream()
              .max(Comparator.comparing(BrokerView.PartitionView::replicationFactor));
      if (widest.isPresent() && widest.get().replicationFactor() > spec.replicas) {
        return Optional.of(
            "spec.replicas: cannot scale down from %d to %d: topic %s has %d replicas per partition; lower its replication factor first"
                .formatted(
                    brokers.getSpec().getReplicas(),
                    spec.replicas,
                    widest.get().topicPartition().topic(),
                    widest.get().replicationFactor()));
      }
    }
    return Optional.empty();
  }

  /**
   * What makes {@code spec.config} unfit for server.properties: a key that is not a config name
   * (properties syntax could make it another key, or several), a value holding a line break or
   * another control character (the rest would be read as lines of its own, such as {@code
   * listeners}), or a key the operator sets.
   */
  private static Optional<String> configProblem(Map<String, String> config) {
    for (Map.Entry<String, String> entry : config.entrySet()) {
      String key = entry.getKey();
      if (!CONFIG_NAME.matcher(key).matches()) {
        return Optional.of(
            "spec.config: \"%s\" is not a config name (letters, digits, '.', '_' and '-')"
                .formatted(printable(key)));
      }
      String value = entry.getValue() == null ? "" : entry.getValue();
      OptionalInt control = value.chars().filter(Character::isISOControl).findFirst();
      if (control.isPresent()) {
        return Optional.of(
            "spec.config.%s: a value may not hold a line break or another control character (%s)"
                .formatted(key, printable(Character.toString(control.getAsInt()))));
      }
      if (ClusterModel.OWNED_CONFIGS.contains(key) || key.startsWith(ClusterModel.OWNED_PREFIX)) {
        return Optional.of(
            "spec.config.%s: set by the operator; remove it from spec.config".formatted(key));
      }
    }
    return Optional.empty();
  }

  /**
   * What makes {@code spec.listeners} unservable: a name or port used twice or the replication
   * listener's, tls authentication without TLS, oauth without a JWKS.
   */
  private static Optional<String> listenerProblem(ClusterSpec spec) {
    if (spec.listeners == null) {
      return Optional.empty();
    }
    Set<String> names = new TreeSet<>();
    Set<Integer> ports = new TreeSet<>();
    for (int i = 0; i < spec.listeners.size(); i++) {
      ClusterSpec.Listener listener = spec.listeners.get(i);
      String field = "spec.listeners[%d]".formatted(i);
      if (listener.name == null || !LISTENER_NAME.matcher(listener.name).matches()) {
        return Optional.of(field + ".name: lower-case letters and digits, starting with a letter");
      }
      if (listener.name.equals("replication") || !names.add(listener.name)) {
        return Optional.of(
            field + ".name: " + listener.name + " is taken (by another listener, or replication)");
      }
      if (listener.port == BrokerListeners.REPLICATION_PORT
          || listener.port == ClusterModel.HTTP_PORT
          || !ports.add(listener.port)) {
        return Optional.of(
            field
                + ".port: "
                + listener.port
                + " is taken (by another listener, replication's 9091 or HTTP's 8080)");
      }
      ClusterSpec.ListenerAuthentication auth = listener.authentication;
      if (auth != null && auth.type == ClusterSpec.AuthenticationType.TLS && !listener.tls) {
        return Optional.of(field + ".authentication.type: tls needs tls: true");
      }
      if (BrokerListeners.ownCertificate(listener) && !listener.tls) {
        return Optional.of(field + ".configuration.brokerCertChainAndKey: needs tls: true");
      }
      if (auth != null
          && auth.type == ClusterSpec.AuthenticationType.OAUTH
          && (auth.jwksEndpointUri == null || auth.jwksEndpointUri.isBlank())) {
        return Optional.of(field + ".authentication.jwksEndpointUri: oauth needs the JWKS's URL");
      }
    }
    return Optional.empty();
  }

  /** {@code text} with its control characters as Java escapes, to quote it in a condition. */
  private static String printable(String text) {
    StringBuilder out = new StringBuilder();
    text.chars()
        .forEach(
            c -> {
              switch (c) {
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                  if (Character.isISOControl(c)) {
                    out.append("\\u%04x".formatted(c));
                  } else {
                    out.append((char) c);
                  }
                }
              }
            });
    return out.toString();
  }
}
