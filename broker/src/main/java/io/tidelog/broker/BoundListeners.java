package io.tidelog.broker;

import io.tidelog.broker.config.BrokerConfig;
import io.tidelog.broker.config.DynamicBrokerConfig;
import io.tidelog.broker.config.Listener;
import io.tidelog.broker.network.SocketServer;
import io.tidelog.broker.security.ListenerSecurity;
import io.tidelog.broker.security.ScramCredentials;
import io.tidelog.broker.security.SslEngineSource;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka listeners this broker serves, and the security of each: those its config names when it
 * starts, then, as Kafka's {@code DynamicListenerConfig} does, a listener bound or closed (with its
 * connections) when this broker's dynamic {@code listeners} change; one that stays keeps its socket
 * and its connections. A TLS listener takes a new keystore or truststore from the dynamic config,
 * or from its files when they change.
 *
 * <p>Changes arrive on the metadata store's event thread, one at a time; the listeners' security is
 * read from any thread.
 */
final class BoundListeners {
  private static final Logger LOG = LoggerFactory.getLogger(BoundListeners.class);

  /**
   * How often the keystore and truststore files of TLS listeners are read for changes: a rotated
   * certificate is served within this long of Kubernetes updating its Secret.
   */
  static final long TLS_RELOAD_CHECK_INTERVAL_MS = 5_000;

  private final ScramCredentials scram;
  private final Map<String, ListenerSecurity> security = new ConcurrentHashMap<>();
  private final Map<String, Listener> bound = new ConcurrentHashMap<>();
  private Vertx vertx;
  private SocketServer server;

  /**
   * The security of each listener of {@code config}, made now so that a broker with a keystore it
   * cannot load stops before it recovers its logs.
   */
  BoundListeners(BrokerConfig config, ScramCredentials scram) {
    this.scram = scram;
    for (Listener listener : config.listeners().bound()) {
      security.put(listener.name(), create(listener, config));
    }
  }

  /** The security of the bound listener {@code name}, or null. */
  ListenerSecurity security(String name) {
    return security.get(name);
  }

  /**
   * Binds the listeners of {@code dynamicConfig}'s current config on {@code server}, then follows
   * its changes; completes once every listener is bound.
   */
  Future<Void> serve(Vertx vertx, SocketServer server, DynamicBrokerConfig dynamicConfig) {
    this.vertx = vertx;
    this.server = server;
    dynamicConfig.addValidator(this::validate);
    dynamicConfig.addListener(next -> apply(next).onFailure(e -> LOG.error(e.getMessage())));
    vertx.setPeriodic(
        TLS_RELOAD_CHECK_INTERVAL_MS,
        id ->
            vertx.executeBlocking(
                () -> {
                  security.values().stream()
                      .map(ListenerSecurity::sslEngines)
                      .filter(Objects::nonNull)
                      .forEach(SslEngineSource::maybeReload);
                  return null;
                },
                false));
    return apply(dynamicConfig.current());
  }

  /**
   * Checks that each listener {@code next} would add can be made, and that each bound TLS listener
   * can take {@code next}'s keystore and truststore.
   */
  private void validate(BrokerConfig next) {
    for (Listener listener : next.listeners().bound()) {
      ListenerSecurity existing = bound.containsKey(listener.name()) ? security(listener) : null;
      if (existing == null) {
        create(listener, next).close();
      } else if (existing.sslEngines() != null) {
        existing.sslEngines().validateReconfiguration(next.security(listener));
      }
    }
  }

  private ListenerSecurity security(Listener listener) {
    return security.get(listener.name());
  }

  /**
   * Binds the listeners of {@code next} that are not bound, closes those it no longer names, and
   * gives the others its keystores and truststores. A listener that stays under its name keeps its
   * address until the broker restarts, as in Kafka.
   */
  private synchronized Future<Void> apply(BrokerConfig next) {
    List<Future<Void>> changes = new ArrayList<>();
    Set<String> named =
        next.listeners().bound().stream().map(Listener::name).collect(Collectors.toSet());
    for (Listener listener : List.copyOf(bound.values())) {
      if (!named.contains(listener.name())) {
        changes.add(unbind(listener));
      }
    }
    for (Listener listener : next.listeners().bound()) {
      if (bound.containsKey(listener.name())) {
        SslEngineSource tls = security(listener).sslEngines();
        if (tls != null) {
          vertx.executeBlocking(() -> tls.reconfigure(next.security(listener)), false);
        }
      } else {
        changes.add(bind(listener, next));
      }
    }
    for (String name : List.copyOf(security.keySet())) {
      if (!named.contains(name)) {
        forget(name);
      }
    }
    return Future.all(changes).mapEmpty();
  }

  private Future<Void> bind(Listener listener, BrokerConfig config) {
    ListenerSecurity listenerSecurity;
    try {
      listenerSecurity = security.computeIfAbsent(listener.name(), n -> create(listener, config));
    } catch (RuntimeException e) {
      return Future.failedFuture(
          new IllegalStateException(
              "Cannot serve listener " + listener.name() + ": " + e.getMessage(), e));
    }
    bound.put(listener.name(), listener);
    SslEngineSource tls = listenerSecurity.sslEngines();
    return server
        .listen(
            listener.listenerName(),
            listener.protocol(),
            listener.host(),
            listener.port(),
            tls == null ? null : tls::serverEngine)
        .recover(
            e -> {
              forget(listener.name());
              return server
                  .close(listener.listenerName())
                  .transform(
                      closed ->
                          Future.failedFuture(
                              new IllegalStateException(
                                  "Cannot listen as " + describe(listener) + ": " + e.getMessage(),
                                  e)));
            })
        .onSuccess(port -> LOG.info("Listening as {}, port {}", describe(listener), port))
        .mapEmpty();
  }

  private Future<Void> unbind(Listener listener) {
    forget(listener.name());
    return server
        .close(listener.listenerName())
        .onSuccess(v -> LOG.info("Closed listener {} and its connections", describe(listener)));
  }

  /** Takes listener {@code name} off the bound ones and closes its security. */
  private void forget(String name) {
    bound.remove(name);
    ListenerSecurity gone = security.remove(name);
    if (gone != null) {
      gone.close();
    }
  }

  private ListenerSecurity create(Listener listener, BrokerConfig config) {
    return ListenerSecurity.create(
        listener.listenerName(), listener.protocol(), config.security(listener), scram);
  }

  /** Each bound listener as its config names it: {@code NAME://host:port (PROTOCOL)}. */
  String describeAll() {
    return bound.values().stream().map(BoundListeners::describe).collect(Collectors.joining(", "));
  }

  private static String describe(Listener listener) {
    return listener.name()
        + "://"
        + listener.host()
        + ":"
        + listener.port()
        + " ("
        + listener.protocol()
        + ")";
  }
}
