package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A live broker as registered under {@code brokers/<id>}: where clients reach it on each of its
 * advertised listeners, its rack, the incarnation that registered (a fresh id per process start),
 * and whether it is in a controlled shutdown, during which it still serves but is given no
 * leadership and leaves every ISR.
 */
public record BrokerInfo(
    int id, List<Endpoint> endpoints, String rack, String incarnation, boolean shuttingDown) {

  /** Where one listener of the broker is reached. */
  public record Endpoint(String listener, String host, int port) {}

  public BrokerInfo {
    endpoints = List.copyOf(endpoints);
  }

  /** The broker's endpoint on the listener named {@code listener}, if it advertises one. */
  public Optional<Endpoint> endpoint(String listener) {
    return endpoints.stream().filter(e -> e.listener().equals(listener)).findFirst();
  }

  BrokerInfo inShutdown() {
    return new BrokerInfo(id, endpoints, rack, incarnation, true);
  }

  JsonObject toJson() {
    JsonArray listeners = new JsonArray();
    endpoints.forEach(
        e ->
            listeners.add(
                new JsonObject()
                    .put("listener", e.listener())
                    .put("host", e.host())
                    .put("port", e.port())));
    return new JsonObject()
        .put("id", id)
        .put("endpoints", listeners)
        .put("rack", rack)
        .put("incarnation", incarnation)
        .put("shuttingDown", shuttingDown);
  }

  static BrokerInfo fromJson(JsonObject json) {
    List<Endpoint> endpoints = new ArrayList<>();
    JsonArray listeners = json.getJsonArray("endpoints", new JsonArray());
    for (int i = 0; i < listeners.size(); i++) {
      JsonObject e = listeners.getJsonObject(i);
      endpoints.add(
          new Endpoint(e.getString("listener"), e.getString("host"), e.getInteger("port")));
    }
    return new BrokerInfo(
        json.getInteger("id"),
        endpoints,
        json.getString("rack"),
        json.getString("incarnation"),
        json.getBoolean("shuttingDown", false));
  }
}
