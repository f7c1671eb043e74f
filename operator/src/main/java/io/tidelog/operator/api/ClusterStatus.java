package io.tidelog.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** What the operator last saw of a {@link Cluster}. */
public class ClusterStatus {
  @JsonPropertyDescription("Ready, Reconciling, Error and ReconciliationPaused.")
  public List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription("The metadata.generation that the status describes.")
  public Long observedGeneration;

  @JsonPropertyDescription("Brokers whose pods are Ready.")
  public Integer readyBrokers;

  @JsonPropertyDescription("The bootstrap Service's address for Kafka clients.")
  public String bootstrapServers;

  @JsonPropertyDescription("The broker id of the active controller.")
  public Integer controllerId;

  @JsonPropertyDescription("Where clients of each listener connect.")
  public List<ListenerStatus> listeners;

  @JsonPropertyDescription(
      "Topics whose replication throttles the operator set to move replicas off the brokers a"
          + " scale-down removes; it removes them once the moves are done.")
  public List<String> throttledTopics;

  /** A listener's address for clients. */
  public static class ListenerStatus {
    @JsonPropertyDescription("The listener's name, as in spec.listeners.")
    public String name;

    @JsonPropertyDescription("The bootstrap Service's address of the listener.")
    public String bootstrapServers;

    @JsonPropertyDescription(
        "On a TLS listener: the Secret whose ca.crt holds the certificates clients should trust.")
    public String caCertificateSecret;
  }
}
