package weka.classifiers.bayes.hdpbnc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.beans.PropertyEditorSupport;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import javax.swing.JButton;
import javax.swing.SwingUtilities;

import org.junit.jupiter.api.Test;

import weka.classifiers.bayes.HDPBayesNet;

/**
 * Stop in a Classify panel (a stand-in with the fields of Weka's ClassifierPanel: its Start and Stop
 * buttons, its classifier editor, and the run thread it makes as an anonymous inner class): for a run of
 * HDPBayesNet the press only interrupts, the thread ends itself by a ThreadDeath at its next check, and
 * Weka's own Stop listener (interrupt and Thread.stop) is not called; for another classifier's run it is.
 * ExplorerStopIT presses the real Explorer's Stop.
 */
class PanelStopTest {

  /** Like ClassifierPanel: the buttons, the editor, the run thread as an anonymous inner class. */
  static final class Panel {
    protected JButton m_StartBut = new JButton("Start");
    protected JButton m_StopBut = new JButton("Stop");
    protected PropertyEditorSupport m_ClassifierEditor = new PropertyEditorSupport();
    protected volatile Thread m_RunThread;
    protected weka.gui.Logger m_Log = new FeedbackTest.RecordingLogger();
    final AtomicInteger m_WekaStops = new AtomicInteger();

    Panel() {
      m_StopBut.addActionListener(e -> m_WekaStops.incrementAndGet());
    }

    Thread run(Runnable body) {
      m_RunThread = new Thread() {
        @Override
        public void run() {
          body.run();
        }
      };
      return m_RunThread;
    }
  }

  /** A training that checks for a Stop every millisecond, as the classifier's code does. */
  static Runnable training(boolean enter, CountDownLatch started, AtomicReference<String> end) {
    return () -> {
      if (enter) {
        PanelStop.enter(Thread.currentThread());
      }
      started.countDown();
      try {
        long until = System.currentTimeMillis() + 20000;
        while (System.currentTimeMillis() < until) {
          PanelStop.stopIfAsked();
          try {
            Thread.sleep(1);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // as a sleep in the classifier's code: answered by the check
          }
        }
        end.set("ran to the end");
      } catch (ThreadDeath stopped) {
        end.set("stopped, interrupted " + Thread.currentThread().isInterrupted());
        throw stopped;
      }
    };
  }

  static void press(JButton b) throws Exception {
    SwingUtilities.invokeAndWait(() -> b.doClick(0));
  }

  @Test
  void aRunOfThisClassifierIsInterruptedOnlyAndStopsItself() throws Exception {
    Panel panel = new Panel();
    CountDownLatch started = new CountDownLatch(1);
    AtomicReference<String> end = new AtomicReference<>();
    Thread t = panel.run(training(true, started, end));
    t.start();
    assertTrue(started.await(10, TimeUnit.SECONDS));
    SwingUtilities.invokeAndWait(() -> {
    }); // the installation that enter() posted has run
    assertEquals(Boolean.TRUE, panel.m_StopBut.getClientProperty(PanelStop.INSTALLED));
    press(panel.m_StopBut);
    t.join(10000);
    assertFalse(t.isAlive());
    assertEquals("stopped, interrupted false", end.get());
    assertEquals(0, panel.m_WekaStops.get(), "Weka's Stop (interrupt and Thread.stop) was called");
    // installed once: a second run's enter() leaves one listener in place
    CountDownLatch again = new CountDownLatch(1);
    Thread u = panel.run(training(true, again, end));
    u.start();
    assertTrue(again.await(10, TimeUnit.SECONDS));
    SwingUtilities.invokeAndWait(() -> {
    });
    assertEquals(1, panel.m_StopBut.getActionListeners().length);
    press(panel.m_StopBut);
    u.join(10000);
    assertEquals("stopped, interrupted false", end.get());
  }

  @Test
  void anotherClassifiersRunGetsWekasStop() throws Exception {
    Panel panel = new Panel();
    SwingUtilities.invokeAndWait(() -> PanelStop.install(panel));
    panel.m_ClassifierEditor.setValue(new weka.classifiers.bayes.NaiveBayes());
    press(panel.m_StartBut);
    CountDownLatch started = new CountDownLatch(1);
    AtomicReference<String> end = new AtomicReference<>();
    Thread t = panel.run(training(false, started, end));
    t.start();
    assertTrue(started.await(10, TimeUnit.SECONDS));
    press(panel.m_StopBut);
    assertEquals(1, panel.m_WekaStops.get(), "Weka's Stop was not called");
    assertTrue(t.isAlive() && !t.isInterrupted(), "the press did more than Weka's listener");
    t.interrupt();
  }

  @Test
  void aRunStartedWithThisClassifierAnswersOnceItReachesIt() throws Exception {
    Panel panel = new Panel();
    SwingUtilities.invokeAndWait(() -> PanelStop.install(panel));
    panel.m_ClassifierEditor.setValue(new HDPBayesNet());
    press(panel.m_StartBut); // the editor holds HDPBayesNet as Start is pressed
    CountDownLatch pressed = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    AtomicReference<String> end = new AtomicReference<>();
    Runnable body = training(true, started, end);
    Thread t = panel.run(() -> {
      try {
        pressed.await(); // Weka's setup code, before the classifier's buildClassifier
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      body.run();
    });
    t.start();
    press(panel.m_StopBut);
    pressed.countDown();
    t.join(10000);
    assertEquals("stopped, interrupted false", end.get());
    assertEquals(0, panel.m_WekaStops.get());
  }

  /**
   * Weka's panel says nothing when a run it did not interrupt itself ends (its status line keeps what it said
   * last, such as "Building model for fold 1..."): a run of this classifier that ends by its Stop says so there,
   * last, also when the press came while the run thread was in Weka's code.
   */
  @Test
  void aStoppedRunSaysSoInTheStatusLine() throws Exception {
    Panel panel = new Panel();
    SwingUtilities.invokeAndWait(() -> PanelStop.install(panel));
    panel.m_ClassifierEditor.setValue(new HDPBayesNet());
    press(panel.m_StartBut);
    CountDownLatch pressed = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    AtomicReference<String> end = new AtomicReference<>();
    Runnable body = training(true, started, end);
    Thread t = panel.run(() -> {
      panel.m_Log.statusMessage("Building model for fold 1..."); // as Weka's panel does, from its run thread
      try {
        pressed.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      body.run();
    });
    t.start();
    press(panel.m_StopBut);
    pressed.countDown();
    t.join(10000);
    assertEquals("stopped, interrupted false", end.get());
    SwingUtilities.invokeAndWait(() -> {
    }); // what the thread posted to the event thread has run
    java.util.List<String> status = ((FeedbackTest.RecordingLogger) panel.m_Log).status;
    assertEquals("HDPBayesNet: stopped", status.get(status.size() - 1), status.toString());
  }
}
